"""The declaration of analysis clark_coref (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DvcPlot, Per, Stage, data_digest

ANALYSIS = Analysis(
    stage=Stage(
        "clark_coref",
        Per.RUN,
        ("model", "device", "seed", "clark_coref", "paths.shared_data"),
        inputs=(data_digest("gap"),),
        dvc_plots=(DvcPlot("heads.csv", "scatter", "select_accuracy", "report_accuracy"),),
        dvc_figures=("heads.png",),
    ),
    section=Section(
        "Coreference head on GAP (Clark et al. Sec. 4.3)",
        120,
    ),
)
