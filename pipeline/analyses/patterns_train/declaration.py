"""The declaration of analysis patterns_train (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.core import layout
from pipeline.dag.stage_types import DATA, OUTPUTS, DvcPlot, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "patterns_train",
        Per.RUN,
        ("seed", "model.name", "patterns"),
        outs=(str(layout.pattern_classifier(OUTPUTS)), str(layout.pattern_labels(OUTPUTS))),
        kept_while_running=True,
        # the label folders it reads: every folder, since DVC cannot interpolate the list
        # patterns.labels_from into deps (a change of the list reruns it through params)
        inputs=(f"{DATA}/annotations",),
        dvc_plots=(DvcPlot("confusion.csv", "confusion", "predicted", "actual"),),
        dvc_figures=("fig1_pattern_examples.png",),
    ),
    section=Section(
        "Attention-pattern classifier (Kovaleva et al. Sec. 4.1)",
        40,
    ),
)
