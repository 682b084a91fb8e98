"""The declaration of analysis ablate (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DATA, MODEL, TASK, DvcPlot, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "ablate",
        Per.TASK_SEED,
        (*MODEL, "seed", "ablate", "precision", "deterministic", "compile"),
        inputs=(f"{DATA}/glue/{TASK}", Upstream("finetune", "models")),
        dvc_plots=(
            DvcPlot("layers.csv", "linear", "layer", "delta"),
            DvcPlot("pruning.csv", "linear", "fraction_pruned", "accuracy"),
        ),
    ),
    section=Section(
        "Disabling heads and layers, head importance and pruning "
        "(Kovaleva et al. Figs. 8-9; Michel et al.)",
        80,
    ),
)
