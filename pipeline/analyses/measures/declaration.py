"""The declaration of analysis measures (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DATA, MODEL, TASK, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "measures",
        Per.TASK_SEED,
        (*MODEL, "seed", "measures"),
        inputs=(f"{DATA}/glue/{TASK}", Upstream("finetune", "models")),
    ),
    section=Section(
        "Value-weighted norms and attention rollout (extension: Kobayashi et al., "
        "Abnar and Zuidema)",
        140,
    ),
)
