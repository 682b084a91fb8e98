"""The declaration of analysis patterns_apply (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.core import layout
from pipeline.dag.stage_types import DATA, OUTPUTS, SEED, STORE, DvcPlot, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "patterns_apply",
        Per.SEED,
        ("tasks", "seed", "model.name", "patterns"),
        outs=(str(layout.pattern_predictions(OUTPUTS, SEED)),),
        # the share round and its stratifier: the model's label folder, named as patterns_train
        # names every folder (DVC cannot interpolate model.name into a path it tracks)
        inputs=(*STORE, Upstream("patterns_train", "classifier"), f"{DATA}/annotations"),
        dvc_plots=(DvcPlot("shares.csv", "bar_horizontal", "share", "class"),),
        dvc_figures=("fig2_pattern_shares.png",),
    ),
    section=Section(
        "Attention-pattern types per task (Kovaleva et al. Figs. 1-2)",
        50,
    ),
)
