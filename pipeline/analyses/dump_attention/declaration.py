"""The declaration of analysis dump_attention (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section
from pipeline.core import layout
from pipeline.dag.stage_types import DATA, MODEL, OUTPUTS, SEED, TASK, Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage(
        "dump_attention",
        Per.TASK_SEED,
        (*MODEL, "seed", "dump_attention", "precision", "compile"),
        results=("metrics",),
        outs=(str(layout.attention_store(f"{OUTPUTS}/attention", TASK, SEED)),),
        makes="attention store",
        kept_while_running=True,
        inputs=(f"{DATA}/glue/{TASK}", Upstream("finetune", "models")),
        note="every stage that reads a fine-tuned model, or the dump of one, runs per\n"
        "(task, seed) too and writes into seed<N>/ folders "
        "(per seed only: patterns_apply, table1)",
    ),
    section=Section(
        "Attention stores: examples encoded and store size per task",
        160,
    ),
)
