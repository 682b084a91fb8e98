"""The declaration of analysis framenet_data (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DATA, Per, Stage, data_digest

ANALYSIS = Analysis(
    stage=Stage(
        "framenet_data",
        Per.RUN,
        (
            "paths.shared_data",
            *(f"framenet.{k}" for k in ("source", "max_tokens", "max_fe_tokens", "target_window")),
        ),
        results=("metrics",),
        outs=(f"{DATA}/framenet/sentences.jsonl",),
        makes="FrameNet sentences",
        inputs=(data_digest("framenet"),),
    ),
    section=Section(
        "FrameNet 1.5: frames and sentences read",
        180,
    ),
)
