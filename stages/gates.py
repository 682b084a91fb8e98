"""gates: Voita et al. (2019) hard-concrete head gates with an L0 penalty, swept over lambda,
beside Michel et al.'s gradient pruning curve, for one task's fine-tuned model.

Runs once per (task, seed) of `tasks` x `seeds`. Reads outputs/models/<task>/seed<seed>/,
samples (seeded by the primary `seed`) of the task's train rows (to fit the gates) and dev
rows (to evaluate them), and the ablate stage's pruning.csv and importance.csv from
outputs/plots/ablate/<task>/seed<seed>/ (computed here when absent). Writes under
outputs/plots/gates/<task>/seed<seed>/ gates.csv (l0_lambda, heads_kept, task metrics),
curves.csv (both methods), overlap.csv (Jaccard of the kept heads) and kept.csv; the figure
outputs/figures/gates/<task>/seed<seed>/gates_vs_pruning.png; and
outputs/metrics/gates/<task>/seed<seed>.json.
The work is pipeline.voita.gates.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.loading import load_finetuned, load_tokenizer
from pipeline.voita.figures import gates_figures
from pipeline.voita.gates import gates_task, michel_from_tables


def run(stage: StageRun) -> None:
    cfg, task = stage.cfg, stage.task
    ablated = stage.results_of("plots", "ablate", task.name, stage.seed_folder)
    tables = [ablated / "pruning.csv", ablated / "importance.csv"]
    michel = (
        michel_from_tables(*map(pd.read_csv, tables)) if all(map(Path.exists, tables)) else None
    )
    result = gates_task(
        load_finetuned(stage.model_folder, stage.device),
        load_tokenizer(stage.settings("model")),
        task,
        read_split(stage.data(), task.name, task.eval_split),
        read_split(stage.data(), task.name, "train"),
        stage.settings("gates"),
        michel,
        dev_rows=stage.settings("ablate").rows(task.name),  # the ablate stage's rows
        max_length=cfg.shared.max_length,
        seed=cfg.seed,
    )
    stage.write_outputs(
        "gates",
        task.name,
        stage.seed_folder,
        tables=result.tables,
        figures=gates_figures(result, task.name),
        metrics=result.metrics,
        config={"model": cfg.model.name, "seed": stage.seed},
    )


if __name__ == "__main__":
    stage_main(run)
