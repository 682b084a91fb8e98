"""The declaration of analysis patterns_apply (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.core import layout
from pipeline.dag.stage_types import OUTPUTS, SEED, STORE, DvcPlot, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "patterns_apply",
        Per.SEED,
        ("tasks", "seed", "model.name", "patterns"),
        outs=(str(layout.pattern_predictions(OUTPUTS, SEED)),),
        inputs=(*STORE, Upstream("patterns_train", "classifier")),
        dvc_plots=(DvcPlot("shares.csv", "bar_horizontal", "share", "class"),),
        dvc_figures=("fig2_pattern_shares.png",),
    ),
    section=Section(
        "Attention-pattern types per task (Kovaleva et al. Figs. 1-2)",
        50,
    ),
)
