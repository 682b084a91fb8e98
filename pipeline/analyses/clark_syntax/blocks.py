"""The syntax stage's block in the docs: Clark's "All" row under both readings, and how its
verdict moves with the absolute reading's threshold (pipeline/claims/prose.py)."""

from __future__ import annotations

from pathlib import Path

from pipeline.analyses.clark_syntax.claims import (
    no_head_does_syntax_overall_absolute,
    no_head_does_syntax_overall_relative,
)
from pipeline.analyses.clark_syntax.results import UdMetrics
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.prose import MPNET_QUICK, Block
from pipeline.claims.rules import Estimate, settle
from pipeline.core import layout

ALL_ROW_THRESHOLDS = (0.35, 0.40, 0.45, 0.50, 0.55, 0.60)  # around DOES_WELL's 0.5
# the runs whose syntax stage each committed claims table judges Clark's "All" row on: the
# standard reference is rejudged on the checkout's (pipeline/claims/reference.py, SHARED)
RUNS = {
    "default run and standard reference (MiniLM-L6)": Path("outputs"),
    "MPNet run (all-mpnet-base-v2)": MPNET_QUICK,
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
    for name, run in RUNS.items():
        syntax = StageOutputs(root / run).read(UdMetrics)
        measured = Estimate.of(syntax.all_relations_head_accuracy)
        rule = absolute.rule
        rules = [rule.scaled(t / rule.threshold.value) for t in ALL_ROW_THRESHOLDS]
        verdicts = [settle(r(measured), measured)[0] for r in rules]
        kept = syntax.all_relations_relative_gain
        gain = None if kept is None else Estimate.of(kept)
        ratio = (
            "not kept | —"
            if gain is None
            else (f"{_bracketed(gain)} | {settle(relative.rule(gain), gain)[0]}")
        )
        lines.append(
            f"| {name} | {_bracketed(measured)} | " + " | ".join(verdicts) + f" | {ratio} |"
        )
    return "\n".join(lines) + "\n"


def _bracketed(measured: Estimate) -> str:
    return f"{measured.statistic:.3f} [{measured.ci_low:.3f}, {measured.ci_high:.3f}]"


BLOCKS = {
    "clark-all-thresholds": Block(
        Path("docs/stages/claims.md"),
        tuple(layout.metrics(run, UdMetrics.stage) for run in RUNS.values()),
        all_row_thresholds,
    ),
}
