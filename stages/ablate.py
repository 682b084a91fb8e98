"""ablate: head and layer disabling sweeps (Figs. 8-9), gradient head importance and the
iterative pruning curve (Michel et al. 2019) for one task's model fine-tuned with one seed.

Runs once per (task, seed) of `tasks` x `seeds`. Reads outputs/models/<task>/seed<seed>/ and
a sample (seeded by the primary `seed`, so the same rows for every fine-tuning seed;
stratified by label) of `ablate.num_examples` rows of the task's dev split (and of its train
split, which scores importance under `ablate.importance_split=train`). Writes under
outputs/plots/ablate/<task>/seed<seed>/ the tables heads.csv, layers.csv, importance.csv,
pruning.csv and examples.csv (the sampled dev ids); under
outputs/figures/ablate/<task>/seed<seed>/ the figures fig8_heads.png, fig9_layers.png and
pruning.png; and outputs/metrics/ablate/<task>/seed<seed>.json. Tables and metrics number
layers and heads from 1 (pipeline/ablation/ablate.py).
"""

from __future__ import annotations

from pipeline.ablation.ablate import ablate_task
from pipeline.ablation.figures import ablation_figures
from pipeline.core.precision import autocast
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.loading import load_finetuned, load_tokenizer


def run(stage: StageRun) -> None:
    cfg, task, settings = stage.cfg, stage.task, stage.settings("ablate")
    model = load_finetuned(stage.model_folder, stage.device)
    scores_train = settings.importance_split == "train"
    with autocast(cfg.precision, model.device):  # fp32 on CPU (README, Precision)
        result = ablate_task(
            model,
            load_tokenizer(stage.settings("model")),
            task,
            read_split(stage.data(), task.name, task.eval_split),
            read_split(stage.data(), task.name, "train") if scores_train else None,
            settings,
            max_length=cfg.shared.max_length,
            seed=cfg.seed,
            deterministic=cfg.deterministic,
            compile_settings=stage.settings("compile"),
        )
    stage.write_outputs(
        "ablate",
        task.name,
        stage.seed_folder,
        tables=result.tables,
        figures=ablation_figures(result, task.name, settings),
        metrics=result.metrics,
        config={"model": cfg.model.name, "seed": stage.seed},
    )


if __name__ == "__main__":
    stage_main(run)
