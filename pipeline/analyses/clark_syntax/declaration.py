"""The declaration of analysis clark_syntax (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DvcPlot, Per, Stage, data_digest

ANALYSIS = Analysis(
    stage=Stage(
        "clark_syntax",
        Per.RUN,
        ("model", "device", "seed", "clark_syntax", "paths.shared_data"),
        inputs=(data_digest("ud"),),
        dvc_plots=(DvcPlot("relations.csv", "bar_horizontal", "head_accuracy", "relation"),),
        dvc_figures=("relations.png",),
    ),
    section=Section(
        "Dependency-relation heads and the attention probe (Clark et al. Secs. 4.2, 5)",
        110,
    ),
)
