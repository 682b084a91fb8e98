"""Measured numbers in the docs, generated from the outputs and never typed by hand: the
claims table as Markdown (`results_markdown`, written by the claims stage), and the blocks
between `<!-- results:NAME -->` and `<!-- /results:NAME -->` markers in README.md and
docs/**/*.md. Each block names the Markdown file that holds it and how its text is made from
output files; `python -m pipeline.claims.prose` rewrites every block, and
tests/project/test_readme_results.py fails when a block differs from what its outputs give."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from pipeline.analyses.clark_syntax.claims import (
    no_head_does_syntax_overall_absolute,
    no_head_does_syntax_overall_relative,
)
from pipeline.analyses.clark_syntax.results import ALL_RELATIONS
from pipeline.analyses.table1.claims import TABLE1
from pipeline.claims.evaluate import PAPERS_EFFECT, headline_counts
from pipeline.claims.readings import shown_with
from pipeline.claims.rules import Estimate, settle
from pipeline.claims.sensitivity import threshold_sensitivity
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_text


@dataclass(frozen=True)
class Block:
    """A generated block: the Markdown file that holds it (relative to the checkout), the
    output files it is made from, and `render(root) -> text` (by default a verbatim copy
    of its one source)."""

    doc: Path
    sources: tuple[Path, ...]
    render: Callable[[Path], str] | None = None

    def text(self, root: Path) -> str:
        """The block's text, ending in a newline so that the closing marker keeps its line."""
        text = self.render(root) if self.render else (root / self.sources[0]).read_text()
        return text if text.endswith("\n") else text + "\n"


def _quick_run(root: Path) -> tuple[list[str], int]:
    """The tasks and primary seed of the committed run (params.yaml)."""
    params = OmegaConf.load(root / "params.yaml")
    return list(params.tasks), int(params.seed)


def measures_markdown(root: Path) -> str:
    """The share of attention [CLS] and [SEP] receive per layer under each measure (the
    measures stage's metrics of the primary seed), one row per task."""
    tasks, seed = _quick_run(root)
    columns = [(t, m) for t in ("cls", "sep") for m in ("weights", "norms", "rollout")]
    names = {"cls": "[CLS]", "sep": "[SEP]"}
    lines = [
        "| task | " + " | ".join(f"{names[t]} {m}" for t, m in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for task in tasks:
        path = root / "outputs" / "metrics" / "measures" / task / f"seed{seed}.json"
        values = json.loads(path.read_text())
        layers = sorted(
            {int(k.rsplit(".L", 1)[1]) for k in values if k.startswith("cls.weights.L")}
        )
        cells = [
            " ".join(f"{values[f'{t}.{m}.L{layer}']:.2f}".lstrip("0") for layer in layers)
            for t, m in columns
        ]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def bullet_lines(path: Path) -> Callable[[Path], str]:
    """A text file's lines as a Markdown list."""
    return lambda root: "".join(f"- {line}\n" for line in (root / path).read_text().splitlines())


def table1_beside_paper(path: Path) -> Callable[[Path], str]:
    """One seed's Table 1 (a table1 metrics file) beside the paper's bert-base numbers: per
    task and column, this run's score [95% CI] and the paper's, in the paper's units (x100),
    then this run's chance score (the majority class; 0 for a correlation)."""

    def render(root: Path) -> str:
        values = json.loads((root / path).read_text())
        tasks = sorted({key.split(".")[0] for key in values}, key=list(TABLE1).index)
        columns = (  # (this run's key, index in TABLE1, header)
            ("pretrained", 2, "no fine-tuning"),
            ("random_init", 1, "random init + fine-tuning"),
            ("finetuned", 0, "pre-trained + fine-tuning"),
        )
        header = " | ".join(f"{title}: this run [95% CI] / paper" for _, _, title in columns)
        lines = [f"| task (dev rows) | {header} | chance |", "|---|---|---|---|---|"]
        for task in tasks:
            cells = [
                f"{100 * values[f'{task}.{key}']:.1f} "
                f"[{100 * values[f'{task}.{key}_ci_low']:.1f}, "
                f"{100 * values[f'{task}.{key}_ci_high']:.1f}] / {TABLE1[task][index]:.1f}"
                for key, index, _ in columns
            ]
            cells.append(f"{round(100 * values[f'{task}.chance'], 1) + 0.0:.1f}")  # no -0.0
            lines.append(f"| {task} ({values[f'{task}.examples']:,}) | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    return render


ALL_ROW_THRESHOLDS = (0.35, 0.40, 0.45, 0.50, 0.55, 0.60)  # around DOES_WELL's 0.5
# the syntax stage each committed claims table judges Clark's "All" row on: the standard
# reference is rejudged on the checkout's (pipeline/claims/reference.py, SHARED)
_ALL_ROW_SOURCES = {
    "default run and standard reference (MiniLM-L6)": Path("outputs/metrics/clark_syntax/ud.json"),
    "MPNet run (all-mpnet-base-v2)": Path(
        "outputs/reference/mpnet_quick/metrics/clark_syntax/ud.json"
    ),
}


def all_row_thresholds(root: Path) -> str:
    """Clark's "All" row, both readings: per committed syntax stage, the best all-relations
    head's accuracy [95% CI] and the absolute reading's verdict at thresholds around
    DOES_WELL (the rule's side, `settle` applied), so the fitted threshold's choice shows
    what it decides; then the relative reading's gain ratio [95% CI] and its verdict
    ("not kept" where the stage's metrics predate it)."""
    absolute, relative = (
        no_head_does_syntax_overall_absolute(),
        no_head_does_syntax_overall_relative(),
    )
    header = " | ".join(f"{t:.2f}" for t in ALL_ROW_THRESHOLDS)
    lines = [
        f"| syntax stage | best head [95% CI] | {header} | relative gain [95% CI] | verdict |",
        "|---|---|" + "---|" * len(ALL_ROW_THRESHOLDS) + "---|---|",
    ]
    for name, path in _ALL_ROW_SOURCES.items():
        values = json.loads((root / path).read_text())
        measured = _kept(values, f"{ALL_RELATIONS}_head_accuracy")
        rule = absolute.rule
        rules = [rule.scaled(t / rule.threshold.value) for t in ALL_ROW_THRESHOLDS]
        verdicts = [settle(r(measured), measured)[0] for r in rules]
        gain = _kept(values, f"{ALL_RELATIONS}_relative_gain")
        ratio = (
            "not kept | —"
            if gain is None
            else (f"{_bracketed(gain)} | {settle(relative.rule(gain), gain)[0]}")
        )
        lines.append(
            f"| {name} | {_bracketed(measured)} | " + " | ".join(verdicts) + f" | {ratio} |"
        )
    return "\n".join(lines) + "\n"


def _kept(values: dict, key: str) -> Estimate | None:
    """A metrics file's statistic `key` with its interval; None where the file lacks it."""
    if key not in values:
        return None
    return Estimate(values[key], values[f"{key}_ci_low"], values[f"{key}_ci_high"])


def _bracketed(measured: Estimate) -> str:
    return f"{measured.statistic:.3f} [{measured.ci_low:.3f}, {measured.ci_high:.3f}]"


REMOVAL_FAMILIES = (
    "heads_removal_helps", "layers_removal_helps", "random_head_removal_helps",
    "prune_40_percent_small_cost", "most_heads_prunable",
)  # fmt: skip


def removal_rows(path: Path) -> Callable[[Path], str]:
    """Every removal and pruning row of a claims table, paper rows first: its kind and
    verdict, as a Markdown list."""

    def render(root: Path) -> str:
        table = pd.read_csv(root / path)
        removal = table[table["claim"].str.split(".").str[1].isin(REMOVAL_FAMILIES)]
        removal = removal.sort_values("kind", key=lambda k: k.ne("paper"), kind="stable")
        return "".join(f"- `{r.claim}` ({r.kind}): {r.verdict}\n" for r in removal.itertuples())

    return render


def registry_counts(root: Path) -> str:
    """Each committed claims table's papers' findings by verdict, with the registry version
    that judged it, as a Markdown list."""
    lines = []
    for name, path in CLAIMS_TABLES.items():
        table = pd.read_csv(root / path)
        first = table.iloc[0]
        lines.append(
            f"- {name}: {(table['kind'] == 'paper').sum()} papers' findings, "
            f"{headline_counts(table)}; judged by registry version "
            f"{int(first['registry_version'])} ({first['registry_status']}, "
            f"{str(first['registry_digest'])[:12]}), {first['registration']}\n"
        )
    return "".join(lines)


_STANDARD = Path("outputs/reference/standard")
# the committed claims tables, by the run they judge
CLAIMS_TABLES = {
    "default run (MiniLM-L6, quick profile)": Path("outputs/plots/claims/claims.csv"),
    "standard reference (MiniLM-L6, three seeds)": _STANDARD / "claims.csv",
    "MPNet run (all-mpnet-base-v2, quick profile)": Path(
        "outputs/reference/mpnet_quick/plots/claims/claims.csv"
    ),
}
_FULL_TABLE1 = Path("outputs/reference/full/table1/seed42.json")
_CROSS_SEED = _STANDARD / "cross_seed_summary.txt"
_ACROSS_MODELS = Path("outputs/plots/across_models/summary.txt")

# marker name -> the block: which Markdown file holds it, and what it is made from
RESULTS = {
    "quick-claims-summary": Block(Path("README.md"), (Path("outputs/plots/claims/summary.txt"),)),
    "quick-claims": Block(
        Path("docs/stages/claims.md"), (Path("outputs/plots/claims/results.md"),)
    ),
    "seed-coverage": Block(
        Path("docs/statistics.md"), (Path("outputs/reference/seed_interval_coverage.md"),)
    ),
    "share-simulation": Block(
        Path("docs/statistics.md"), (Path("outputs/reference/share_simulation.md"),)
    ),
    "quick-measures": Block(
        Path("docs/stages/norms-rollout-gates.md"),
        (Path("params.yaml"), Path("outputs/metrics/measures")),
        measures_markdown,
    ),
    "quick-patterns": Block(
        Path("docs/stages/patterns.md"), (Path("outputs/plots/patterns_train/summary.txt"),)
    ),
    "standard-claims-summary": Block(Path("docs/stages/claims.md"), (_STANDARD / "summary.txt",)),
    "standard-claims": Block(Path("docs/stages/claims.md"), (_STANDARD / "results.md",)),
    "standard-cross-seed": Block(
        Path("docs/stages/seeds.md"), (_CROSS_SEED,), bullet_lines(_CROSS_SEED)
    ),
    "full-table1": Block(
        Path("docs/configs.md"), (_FULL_TABLE1,), table1_beside_paper(_FULL_TABLE1)
    ),
    "quick-across-models": Block(Path("docs/comparing-runs.md"), (_ACROSS_MODELS,)),
    "standard-removal-rows": Block(
        Path("docs/stages/claims.md"),
        (_STANDARD / "claims.csv",),
        removal_rows(_STANDARD / "claims.csv"),
    ),
    "current-claims-counts": Block(
        Path("docs/comparing-runs.md"), tuple(CLAIMS_TABLES.values()), registry_counts
    ),
    "clark-all-thresholds": Block(
        Path("docs/stages/claims.md"), tuple(_ALL_ROW_SOURCES.values()), all_row_thresholds
    ),
}


def _number(value: float, digits: int = 3) -> str:
    return "" if pd.isna(value) else f"{value:.{digits}f}"


def _estimate(row: pd.Series) -> str:
    if pd.isna(row["estimate"]):
        return "undefined"
    return f"{row['estimate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def _effect(row: pd.Series) -> str:
    """The power check's effect and whose it is: the paper's printed number, or assumed."""
    effect = row.get("power_effect")
    if effect is None or pd.isna(effect):
        return ""
    source = str(row.get("power_effect_source"))
    whose = "paper" if source == PAPERS_EFFECT else source.split(":")[0]
    return f"{effect:.3f} ({whose})"  # paper, assumed, or this project's margin


def _verdict(row: pd.Series) -> str:
    """The verdict, with its reason where it has one and the interval's note (e.g. how many
    heads changed no prediction)."""
    verdict = f"**{row['verdict']}**" if row["verdict"] == "contradicted" else row["verdict"]
    said = [row.get(k) for k in ("reason", "note")]  # a note may be the reason itself
    said = [text for text in dict.fromkeys(said) if isinstance(text, str) and text]
    return f"{verdict} ({'; '.join(said)})" if said else verdict


def _seeds(row: pd.Series) -> str:
    if pd.isna(row["seeds"]):
        return "pre-trained"
    return f"{int(row['seeds_same_verdict'])} of {int(row['seeds'])}"


def results_markdown(table: pd.DataFrame) -> str:
    """Counts per verdict, then one Markdown table for the papers' claims and one for the
    extensions: claim, the paper's number, the effect the power check looked for (the
    paper's, or assumed: its source is in the reason), this run's estimate [95% CI], verdict
    (with its
    reason), threshold sensitivity (verdict at half / double), seeds agreeing; first, the
    claims registry the verdicts were judged by, where the table names one."""
    lines = []
    if "registry_digest" in table and len(table):
        first = table.iloc[0]
        lines += [
            f"Judged by claims registry version {int(first['registry_version'])} "
            f"({first['registry_status']}), digest `{first['registry_digest']}`: every "
            f"verdict is {first['registration']}.",
            "",
        ]
    for kind, title in (("paper", "The papers' findings"), ("extension", "Extensions")):
        counted = table[table["kind"] == kind]
        counts = counted["verdict"].value_counts()
        tally = ", ".join(f"{n} {v}" for v, n in counts.items())
        rows = shown_with(table, kind)
        lines += [
            f"{title} ({len(counted)}: {tally}; a finding read two ways is followed by its "
            "readings' rows):",
            "",
            "| claim | paper (bert-base) | effect for power | this run [95% CI] | verdict | "
            "at half / double threshold | seeds agreeing |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, row in rows.iterrows():
            sensitivity = threshold_sensitivity(
                row["threshold"], row["verdict_half_threshold"], row["verdict_double_threshold"]
            )
            lines.append(
                f"| `{row['claim']}` | {_number(row['paper_number'])} | {_effect(row)} | "
                f"{_estimate(row)} | {_verdict(row)} | {sensitivity} | {_seeds(row)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def marked(name: str) -> re.Pattern[str]:
    """The block between `<!-- results:NAME -->` and `<!-- /results:NAME -->`."""
    return re.compile(rf"(<!-- results:{name} -->\n)(.*?)(<!-- /results:{name} -->)", re.S)


MARKER = re.compile(r"<!-- results:([\w-]+) -->")


def with_results(text: str, doc: Path, root: Path) -> str:
    """`text` (the Markdown file `doc`) with every block that `doc` holds regenerated from
    the outputs under `root`. A marker of a block that lives elsewhere, or of no block, fails."""
    for name in MARKER.findall(text):
        if name not in RESULTS:
            raise PipelineError(
                f"{doc} has a `<!-- results:{name} -->` block that no generator makes"
            )
        if RESULTS[name].doc != doc:
            raise PipelineError(f"{doc}: the {name} block belongs in {RESULTS[name].doc}")
    for name, block in RESULTS.items():
        if block.doc != doc:
            continue
        pattern = marked(name)
        if not pattern.search(text):
            raise PipelineError(f"{doc} has no `<!-- results:{name} -->` block; add one")
        generated = block.text(root)
        text = pattern.sub(lambda m, t=generated: m.group(1) + t + m.group(3), text)
    return text


def main(root: Path) -> None:
    for doc in sorted({block.doc for block in RESULTS.values()}):
        write_text(root / doc, with_results((root / doc).read_text(), doc, root))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Rewrite the generated blocks of README.md and docs/ from the outputs."
    )
    parser.add_argument("root", nargs="?", type=Path, default=Path.cwd(), help="the checkout")
    main(parser.parse_args().root)
    for name, block in RESULTS.items():
        print(f"{block.doc}: {name} block from", ", ".join(map(str, block.sources)))
