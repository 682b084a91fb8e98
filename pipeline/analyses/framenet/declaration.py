"""The declaration of analysis framenet (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DATA, MODEL, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "framenet",
        Per.RUN,
        (*MODEL, "seed", "framenet"),
        inputs=(f"{DATA}/framenet/sentences.jsonl",),
        dvc_figures=("fig3_heads.png", "fig3_top_heads.png", "fig4_top_heads.png"),
    ),
    section=Section(
        "Relation-specific heads on FrameNet (Kovaleva et al. Figs. 3-4)",
        70,
    ),
)
