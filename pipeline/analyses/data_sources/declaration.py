"""The declaration of analysis data_sources (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis
from pipeline.core import layout
from pipeline.dag.stage_types import READERS_GROUPS, Per, Stage, data_digest

ANALYSIS = Analysis(
    stage=Stage(
        "data_sources",
        Per.RUN,
        # whole groups: each data set's reader takes its group's settings (the stage runs on
        # every `dvc repro` anyway)
        ("tasks", "paths.shared_data", "paths.glue_dir", "prepare", *READERS_GROUPS),
        results=(),
        kept_outs=tuple(data_digest(name) for name in layout.DATA_SOURCES),
        task_configs=True,
        always_changed=True,
        note="the offline data sets live outside the repo (DARK_SECRETS_DATA may point "
        "anywhere):\nthis stage runs on every `dvc repro`, checks them and writes a digest of "
        "the files\n"
        "each reader reads; a reader reruns when its digest changes",
    ),
)
