"""The declaration of analysis table1 (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DvcPlot, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "table1",
        Per.SEED,
        ("tasks", "seed", "model.name", "table1"),
        inputs=(Upstream("finetune", "plots", "predictions.csv"),),
        task_configs=True,
        dvc_plots=(DvcPlot("table1.csv", "bar_horizontal", "finetuned", "task"),),
        dvc_figures=("table1.png",),
    ),
    section=Section(
        "Table 1: fine-tuned against random-weight and frozen models (Kovaleva et al.)",
        35,
    ),
)
