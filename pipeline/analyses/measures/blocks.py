"""The measures stage's block in the docs: the share of attention [CLS] and [SEP] receive per
layer under each measure, on the default run's primary seed (pipeline/claims/prose.py)."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from pipeline.analyses.measures.results import MeasuresByLayer
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.prose import Block

TOKENS = {"cls": "[CLS]", "sep": "[SEP]"}
MEASURES = ("weights", "norms", "rollout")


def measures_markdown(root: Path) -> str:
    """One row per task of the default run (params.yaml): each token's share per layer under
    each measure, on the primary seed."""
    params = OmegaConf.load(root / "params.yaml")
    out = StageOutputs(root / "outputs")
    columns = [(t, m) for t in TOKENS for m in MEASURES]
    lines = [
        "| task | " + " | ".join(f"{TOKENS[t]} {m}" for t, m in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for task in params.tasks:
        shares = out.read(MeasuresByLayer, task, int(params.seed)).shares
        cells = [" ".join(f"{v:.2f}".lstrip("0") for v in shares[f"{t}.{m}"]) for t, m in columns]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


BLOCKS = {
    "quick-measures": Block(
        Path("docs/stages/norms-rollout-gates.md"),
        (Path("params.yaml"), Path("outputs/metrics/measures")),
        measures_markdown,
    ),
}
