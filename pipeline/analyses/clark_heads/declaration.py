"""The declaration of analysis clark_heads (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import STORE, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "clark_heads",
        Per.TASK_SEED,
        ("seed", "model.name", "clark_heads"),
        inputs=STORE,
    ),
    section=Section(
        "Where heads attend, entropy, head clustering (Clark et al. Secs. 3-4, 6)",
        100,
    ),
)
