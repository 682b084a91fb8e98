"""The declaration of analysis cross_seed (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "cross_seed",
        Per.RUN,
        ("tasks", "seeds", "model.name"),
        inputs=(Upstream("finetune", "metrics"), Upstream("ablate", "plots")),
        task_configs=True,
        dvc_figures=("metric_by_seed.png",),
    ),
    section=Section(
        "Fine-tuning seeds: metric spread, agreement of head effects and importances",
        90,
    ),
)
