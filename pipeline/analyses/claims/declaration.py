"""The declaration of analysis claims (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "claims",
        Per.RUN,
        ("tasks", "seed", "seeds", "model.name", "experiment_name"),
        inputs=(
            "pipeline/claims/amendments.yaml",  # the registry's versions, read at run time
            "pipeline/claims/registry_fixture",  # the registry's digest measures on it
            "data/annotations",  # and pins the label files the pattern classifier learns from
            "conf",  # which the registry composes under each judged profile (measurement_pins)
            Upstream("prepare", "metrics"),
            Upstream("table1", "metrics"),
            Upstream("patterns_train", "metrics"),
            Upstream("patterns_train", "plots", "cross_validation.csv"),
            Upstream("patterns_apply", "metrics"),
            Upstream("analyze", "metrics"),
            Upstream("ablate", "metrics"),
            Upstream("framenet", "plots", "heads.csv"),
            Upstream("clark_heads", "metrics"),
            Upstream("clark_syntax", "metrics"),
            Upstream("clark_coref", "metrics"),
            Upstream("measures", "metrics"),
            Upstream("ablate", "plots"),
        ),
        dvc_figures=("forest.png",),
    ),
    section=Section(
        "Claims: the papers' findings tested on this run",
        10,
    ),
)
