"""The declaration of analysis gates (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import DATA, MODEL, TASK, DvcPlot, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "gates",
        Per.TASK_SEED,
        (*MODEL, "seed", "gates", "ablate.num_examples", "ablate.num_examples_by_task"),
        inputs=(
            f"{DATA}/glue/{TASK}",
            Upstream("finetune", "models"),
            Upstream("ablate", "plots"),
        ),
        dvc_plots=(DvcPlot("curves.csv", "linear", "heads_kept", "metric"),),
    ),
    section=Section(
        "Hard-concrete head gates beside the pruning curve (Voita et al.)",
        130,
    ),
)
