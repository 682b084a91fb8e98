"""Compare two runs in a terminal, the claims' verdicts first.

    python -m tools.compare                  # the last commit against the workspace
    python -m tools.compare main my-exp      # any two git revisions or DVC experiments
    python -m tools.compare --plot outputs/plots/ablate/sst2/seed42/layers.csv [REV ...]
    python -m tools.compare --plot outputs/figures/ablate/sst2/seed42/fig8_heads.png [REV ...]

Reads `dvc metrics diff --json` and `dvc params diff --json` and prints, within 100 columns
(an id longer than its column gets a line of its own, never cut): whether the two runs cover
different tasks or fine-tuning seeds, the claims whose verdict changed (with the statistic and
the new interval) among those both runs judged, the claims that only one run has, the
headline counts of the papers' findings, then how many numeric metrics changed per stage and
the largest changes. `--plot`
runs `dvc plots diff` on one table with the axes its stage declares (`DvcPlot` in
pipeline/analyses/<stage>/declaration.py), or on one figure: dvc.yaml cannot list those of
every task.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
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
from pipeline.dag.declarations import stage
from pipeline.dag.stage_types import OUTPUTS, DvcPlot

CLAIMS = str(layout.metrics(OUTPUTS, "claims"))  # outputs/metrics/claims.json
HEADLINE = "verdicts.paper."  # claims.json's counts of the papers' findings, by verdict
FINDINGS = "findings"  # claims.json's counts, tasks and seeds in one line (for dvc exp show)
WIDTH = 100
Change = dict  # one metric's {"old": ..., "new": ..., "diff": ...} in `dvc metrics diff --json`


def dvc_diff(kind: str, revisions: Sequence[str]) -> dict[str, dict[str, Change]]:
    """`dvc <kind> diff --json [a [b]]` (kind: metrics or params): file -> key -> change."""
    found = subprocess.run(
        ["dvc", kind, "diff", "--json", *revisions], capture_output=True, text=True
    )
    if found.returncode != 0:
        why = (found.stderr.strip().splitlines() or ["no output"])[-1]
        raise PipelineError(f"dvc {kind} diff {' '.join(revisions)} failed: {why}")
    return json.loads(found.stdout or "{}")


def metrics_diff(revisions: Sequence[str]) -> dict[str, dict[str, Change]]:
    """`dvc metrics diff --json [a [b]]`: file -> metric -> change."""
    return dvc_diff("metrics", revisions)


def _number(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def params_diff(revisions: Sequence[str]) -> dict[str, dict[str, Change]]:
    """`dvc params diff --json [a [b]]`: file -> parameter -> change."""
    return dvc_diff("params", revisions)


def _columns(name: str, width: int, rest: str) -> list[str]:
    """`name` padded to `width` columns and `rest` beside it, indented by two; a longer
    `name` on a line of its own (never cut), `rest` below it in its column."""
    if len(name) <= width:
        return [f"  {name:<{width}} {rest}".rstrip()]
    return [f"  {name}", f"  {'':<{width}} {rest}".rstrip()]


def _wrapped(text: str, indent: str = "  ") -> list[str]:
    """`text` within WIDTH columns, broken at spaces only (an id is never split)."""
    return textwrap.wrap(
        text, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )


COVERAGE = (("tasks", "tasks"), ("seeds", "fine-tuning seeds"))  # params.yaml key, in words


def coverage_lines(params: dict[str, dict[str, Change]]) -> list[str]:
    """A line for each of `tasks` and `seeds` that differs between the two runs, from
    `dvc params diff --json`: their claims cannot be compared one to one."""
    changed = params.get("params.yaml", {})
    lines = []
    for key, words in COVERAGE:
        if key in changed:
            old, new = (_listed(changed[key].get(side)) for side in ("old", "new"))
            lines += _wrapped(f"The two runs cover different {words}: {old} -> {new}")
    return lines


def _listed(value) -> str:
    """A parameter's value in words; `dvc params diff --json` writes a list as its repr."""
    if value is None:
        return "none"
    if isinstance(value, str) and value.startswith("["):
        with contextlib.suppress(ValueError, SyntaxError):
            value = ast.literal_eval(value)
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _verdicts(claims: dict[str, Change]) -> dict[str, Change]:
    """claim id -> its verdict's change."""
    return {k.removesuffix(".verdict"): v for k, v in claims.items() if k.endswith(".verdict")}


def one_run_lines(claims: dict[str, Change], old: str, new: str, shown: int) -> list[str]:
    """The claims that only one of the two runs judged (another task, a claim added or
    removed), counted per run and the first `shown` of each named: not changed verdicts."""
    lines = []
    for absent, judged_by in (("new", old), ("old", new)):
        only = sorted(c for c, v in _verdicts(claims).items() if v.get(absent) is None)
        if only:
            more = f", and {len(only) - shown} more" if len(only) > shown else ""
            listed = ", ".join(only[:shown]) + more
            lines += _wrapped(f"Claims judged only by {judged_by}: {len(only)} ({listed})")
    return lines


def _both(claims: dict[str, Change]) -> dict[str, Change]:
    """The verdict changes of the claims both runs judged."""
    return {
        claim: change
        for claim, change in _verdicts(claims).items()
        if change.get("old") is not None and change.get("new") is not None
    }


def verdict_lines(claims: dict[str, Change]) -> list[str]:
    """One line per claim judged by both runs whose verdict changed: claim, verdicts,
    statistic, new interval."""
    lines = []
    for claim, change in sorted(_both(claims).items()):
        verdicts = f"{change['old']} -> {change['new']}"
        statistic = claims.get(f"{claim}.statistic", {})
        low, high = (claims.get(f"{claim}.ci_{side}", {}).get("new") for side in ("low", "high"))
        interval = f" [{_number(low, 3)}, {_number(high, 3)}]" if low is not None else ""
        estimate = ""
        if statistic:
            old, new = (_number(statistic.get(side), 3) for side in ("old", "new"))
            estimate = f"{old} -> {new}{interval}"
        lines += _columns(claim, 36, f"{verdicts:<30}{estimate}")
    return lines


def headline_lines(claims: dict[str, Change]) -> list[str]:
    """The papers' findings counted by verdict, before -> after, where a count changed."""
    counts = {k.removeprefix(HEADLINE): v for k, v in claims.items() if k.startswith(HEADLINE)}
    moved = [f"{v} {_number(c.get('old'))} -> {_number(c.get('new'))}" for v, c in counts.items()]
    text = f"The papers' findings by verdict: {', '.join(moved)}" if moved else ""
    return _wrapped(text)


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
        if not (file == CLAIMS and (name == FINDINGS or name.startswith((*above, HEADLINE))))
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
        where = f"{PurePosixPath(file).relative_to(OUTPUTS, 'metrics')}: {name}"
        values = f"{_number(change.get('old'))} -> {_number(change.get('new'))}"
        lines += _columns(where, 64, values)
    return lines


def report(
    diff: dict[str, dict[str, Change]],
    revisions: Sequence[str],
    shown: int,
    params: dict[str, dict[str, Change]] | None = None,
) -> str:
    """What changed between the two runs (`dvc metrics diff` and `dvc params diff`)."""
    old = revisions[0] if revisions else "HEAD"
    new = revisions[1] if len(revisions) > 1 else "the workspace"
    claims = diff.get(CLAIMS, {})
    lines = [f"{old} -> {new}", *coverage_lines(params or {})]
    lines.append(f"Verdicts changed, of the claims both runs judged: {len(_both(claims))}")
    lines += verdict_lines(claims)
    lines += one_run_lines(claims, old, new, shown)
    lines += headline_lines(claims)
    lines += metric_lines(diff, shown)
    return "\n".join(lines)


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


def figure_target(figure: str) -> str:
    """`figure` if it names a PNG under outputs/figures/<stage>/ (not its caption sidecar)."""
    parts = PurePosixPath(figure).parts
    if len(parts) < 4 or parts[:2] != (OUTPUTS, "figures") or not figure.endswith(".png"):
        raise PipelineError(
            f"{figure} is not a figure: give a .png under {OUTPUTS}/figures/<stage>/ (its .json "
            "beside it is the caption)"
        )
    return figure


def plot_command(table: str, revisions: Sequence[str]) -> list[str]:
    """`dvc plots diff` of one table with its stage's declared axes, or of one figure."""
    if PurePosixPath(table).parts[1:2] == ("figures",):
        return ["dvc", "plots", "diff", *revisions, "--targets", figure_target(table)]
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
    parser.add_argument(
        "--plot", metavar="PATH", help="draw one table with its declared axes, or one figure"
    )
    args = parser.parse_args(argv)
    with exit_on_error():
        if len(args.revisions) > 2:
            raise PipelineError("give at most two revisions (old, then new)")
        if args.plot:
            sys.exit(subprocess.run(plot_command(args.plot, args.revisions)).returncode)
        diff, params = metrics_diff(args.revisions), params_diff(args.revisions)
        print(report(diff, args.revisions, args.shown, params))


if __name__ == "__main__":
    main()
