"""The declaration of analysis report (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis
from pipeline.core import layout
from pipeline.dag.stage_types import OUTPUTS, Per, Stage

ANALYSIS = Analysis(
    stage=Stage(
        "report",
        Per.RUN,
        (),
        whole_config=True,  # the page shows the whole config
        results=(),
        outs=(str(layout.report_page(OUTPUTS)),),
        inputs=(f"{OUTPUTS}/figures", f"{OUTPUTS}/plots", f"{OUTPUTS}/metrics"),
        note="last in the DAG: every stage's results on one page; compares the outputs with "
        "git's HEAD (no dep)",
    ),
)
