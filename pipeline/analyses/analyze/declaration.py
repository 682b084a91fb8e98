"""The declaration of analysis analyze (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import STORE, DvcPlot, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "analyze",
        Per.TASK_SEED,
        ("seed", "model.name", "analyze"),
        inputs=STORE,
        dvc_plots=(DvcPlot("cosine_layers.csv", "linear", "layer", "cosine"),),
    ),
    section=Section(
        "Attention analyses (Kovaleva et al. Figs. 5, 6, 7, 10)",
        60,
    ),
)
