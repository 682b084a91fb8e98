"""The declaration of analysis finetune (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.core import layout
from pipeline.dag.stage_types import DATA, MODEL, OUTPUTS, SEED, TASK, DvcPlot, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "finetune",
        Per.TASK_SEED,
        (*MODEL, "finetune", "precision", "deterministic", "compile"),
        outs=(str(layout.model(OUTPUTS, TASK, SEED)),),
        makes="fine-tuned model",
        kept_while_running=True,
        inputs=(f"{DATA}/glue/{TASK}",),
        dvc_plots=(DvcPlot("loss.csv", "linear", "step", "loss"),),
        note="per (task, fine-tuning seed): `seeds` lists the seeds; `seed` (the primary one, "
        "in\n"
        "`seeds`) seeds the data samples, so every seed is scored on the same rows",
    ),
    section=Section(
        "Fine-tuning: loss curves and Table 1 (Kovaleva et al. Table 1)",
        30,
    ),
)
