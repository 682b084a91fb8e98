"""The declaration of analysis prepare (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DATA, Per, Stage, data_digest

ANALYSIS = Analysis(
    stage=Stage(
        "prepare",
        Per.RUN,
        ("seed", "tasks", "prepare", "paths.shared_data", "paths.glue_dir"),
        results=("metrics",),
        outs=(f"{DATA}/glue",),
        makes="prepared data",
        inputs=(data_digest("glue"),),
        task_configs=True,
    ),
    section=Section(
        "Prepared data: rows per task and split, and the source rows sampled",
        170,
    ),
)
