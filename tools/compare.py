"""Compare two runs in a terminal, the claims' verdicts first.

    python -m tools.compare                  # the last commit against the workspace
    python -m tools.compare main my-exp      # any two git revisions or DVC experiments
    python -m tools.compare --plot outputs/plots/ablate/sst2/seed42/layers.csv [REV ...]

Reads `dvc metrics diff --json` and prints, within 100 columns: the claims whose verdict
changed (with the statistic and the new interval), the headline counts of the papers'
findings, then how many numeric metrics changed per stage and the largest changes. `--plot`
runs `dvc plots diff` on one table with the axes its stage declares (`DvcPlot` in
pipeline/dag/declarations.py), which dvc.yaml cannot list for every task.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath

from pipeline.core import layout
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.dag.declarations import OUTPUTS, DvcPlot, stage

CLAIMS = str(layout.metrics(OUTPUTS, "claims"))  # outputs/metrics/claims.json
HEADLINE = "verdicts.paper."  # claims.json's counts of the papers' findings, by verdict
WIDTH = 100
Change = dict  # one metric's {"old": ..., "new": ..., "diff": ...} in `dvc metrics diff --json`


def metrics_diff(revisions: Sequence[str]) -> dict[str, dict[str, Change]]:
    """`dvc metrics diff --json [a [b]]`: file -> metric -> change."""
    found = subprocess.run(
        ["dvc", "metrics", "diff", "--json", *revisions], capture_output=True, text=True
    )
    if found.returncode != 0:
        why = (found.stderr.strip().splitlines() or ["no output"])[-1]
        raise PipelineError(f"dvc metrics diff {' '.join(revisions)} failed: {why}")
    return json.loads(found.stdout or "{}")


def _number(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _fit_middle(text: str, width: int) -> str:
    """`text` cut in its middle to `width`, so that a claim keeps its task at the end."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def verdict_lines(claims: dict[str, Change]) -> list[str]:
    """One line per claim whose verdict changed: claim, verdicts, statistic, new interval."""
    lines = []
    for key in sorted(k for k in claims if k.endswith(".verdict")):
        claim = key.removesuffix(".verdict")
        change = claims[key]
        verdicts = f"{change.get('old') or 'absent'} -> {change.get('new') or 'absent'}"
        statistic = claims.get(f"{claim}.statistic", {})
        low, high = (claims.get(f"{claim}.ci_{side}", {}).get("new") for side in ("low", "high"))
        interval = f" [{_number(low, 3)}, {_number(high, 3)}]" if low is not None else ""
        estimate = ""
        if statistic:
            old, new = (_number(statistic.get(side), 3) for side in ("old", "new"))
            estimate = f"{old} -> {new}{interval}"
        lines.append(f"  {_fit_middle(claim, 36):<36} {verdicts:<30}{estimate}".rstrip())
    return lines


def headline_lines(claims: dict[str, Change]) -> list[str]:
    """The papers' findings counted by verdict, before -> after, where a count changed."""
    counts = {k.removeprefix(HEADLINE): v for k, v in claims.items() if k.startswith(HEADLINE)}
    moved = [f"{v} {_number(c.get('old'))} -> {_number(c.get('new'))}" for v, c in counts.items()]
    text = f"The papers' findings by verdict: {', '.join(moved)}" if moved else ""
    return textwrap.wrap(text, WIDTH, subsequent_indent="  ")


def _relative(change: Change) -> float:
    old, new = change.get("old"), change.get("new")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new)):
        return math.inf  # appeared, vanished or not a number: listed first
    return abs(new - old) / max(abs(old), 1e-12)


def metric_lines(diff: dict[str, dict[str, Change]], shown: int) -> list[str]:
    """Changed metrics counted per stage folder, then the `shown` largest relative changes
    (what the lines above show aside: the claims whose verdict changed, the headline)."""
    claims = diff.get(CLAIMS, {})
    above = tuple(k.removesuffix("verdict") for k in claims if k.endswith(".verdict"))
    changes = [
        (file, name, change)
        for file, metrics in diff.items()
        for name, change in metrics.items()
        if not (file == CLAIMS and name.startswith((*above, HEADLINE)))
    ]
    if not changes:
        return ["No other metric changed."]
    per_stage = Counter(
        PurePosixPath(file).parts[2].removesuffix(".json") for file, _, _ in changes
    )
    lines = [
        f"{len(changes)} other metrics changed: "
        + ", ".join(f"{stage} {n}" for stage, n in per_stage.most_common())
    ]
    largest = sorted(changes, key=lambda c: _relative(c[2]), reverse=True)[:shown]
    for file, name, change in largest:
        where = _fit(f"{PurePosixPath(file).relative_to(OUTPUTS, 'metrics')}: {name}", 64)
        values = f"{_number(change.get('old'))} -> {_number(change.get('new'))}"
        lines.append(f"  {where:<64} {values}")
    return lines


def report(diff: dict[str, dict[str, Change]], revisions: Sequence[str], shown: int) -> str:
    old = revisions[0] if revisions else "HEAD"
    new = revisions[1] if len(revisions) > 1 else "the workspace"
    claims = diff.get(CLAIMS, {})
    changed = verdict_lines(claims)
    lines = [f"{old} -> {new}", f"Verdicts changed: {len(changed)}", *changed]
    lines += headline_lines(claims)
    lines += metric_lines(diff, shown)
    return "\n".join(_fit(line, WIDTH) for line in lines)


def declared_plot(table: str) -> DvcPlot:
    """The axes declared for a table of outputs/plots/<stage>/..., by its stage and file name."""
    parts = PurePosixPath(table).parts
    if len(parts) < 4 or parts[:2] != (OUTPUTS, "plots"):
        raise PipelineError(f"{table} is not a table under outputs/plots/<stage>/")
    try:
        declared = stage(parts[2])
    except KeyError:
        raise PipelineError(
            f"no stage named {parts[2]!r} (the folder after outputs/plots/)"
        ) from None
    plots = {plot.table: plot for plot in declared.dvc_plots}
    if parts[-1] not in plots:
        raise PipelineError(
            f"{declared.name} declares no axes for {parts[-1]} (it does for: "
            f"{', '.join(plots) or 'none'}); give them yourself: "
            f"dvc plots diff --targets {table} -x <column> -y <column>"
        )
    return plots[parts[-1]]


def plot_command(table: str, revisions: Sequence[str]) -> list[str]:
    plot = declared_plot(table)
    axes = ["--template", plot.template, "-x", plot.x, "-y", plot.y]
    return ["dvc", "plots", "diff", *revisions, "--targets", table, *axes]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.compare",
        description="Compare two runs: changed verdicts first, then the metrics that moved.",
    )
    parser.add_argument(
        "revisions", nargs="*", help="up to two git revisions or DVC experiments (default: "
        "HEAD against the workspace; one: it against the workspace)",
    )  # fmt: skip
    parser.add_argument("--shown", type=int, default=10, help="largest metric changes listed")
    parser.add_argument("--plot", metavar="TABLE", help="draw one table with its declared axes")
    args = parser.parse_args(argv)
    with exit_on_error():
        if len(args.revisions) > 2:
            raise PipelineError("give at most two revisions (old, then new)")
        if args.plot:
            sys.exit(subprocess.run(plot_command(args.plot, args.revisions)).returncode)
        print(report(metrics_diff(args.revisions), args.revisions, args.shown))


if __name__ == "__main__":
    main()
