"""The declaration of analysis model_identity (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis
from pipeline.dag.stage_types import MODEL_IDENTITY, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "model_identity",
        Per.RUN,
        ("model",),
        results=(),
        kept_outs=(MODEL_IDENTITY,),
        always_changed=True,
        note="the model's files may change under the same model.name_or_path: this stage "
        "runs on every\n`dvc repro` and writes the model's name, location and files' digest; "
        "a stage that loads the\nmodel reruns when that record changes",
    ),
)
