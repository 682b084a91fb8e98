"""finetune: fine-tune the model on one GLUE task with one seed; evaluate it and the Table 1
baselines.

Runs once per (task, seed) of `tasks` x `seeds` (`--seed`; under Hydra the seed is `seed`):
the seed sets the classifier head's initialisation, the data order and dropout; the
prepared data (sampled with the primary `seed`) is the same for every seed. Writes
outputs/models/<task>/seed<seed>/ (safetensors + tokenizer),
outputs/metrics/finetune/<task>/seed<seed>.json (flat keys `<variant>.<metric>`, variants
finetuned / pretrained / random_init, see pipeline/models/finetune.py), and under
outputs/plots/finetune/<task>/seed<seed>/ the loss curves loss.csv and predictions.csv (idx,
label, then each variant's predicted class id, or score for regression, per eval row),
with the figure outputs/figures/finetune/<task>/seed<seed>/loss.png. While it trains, it
keeps resumable checkpoints in outputs/checkpoints/finetune/<task>/seed<seed>/ (not a DVC
output: `dvc repro` would delete it before the rerun); they are removed once the outputs
are written.
"""

from __future__ import annotations

from pipeline.core import layout
from pipeline.core.io import atomic_path
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.checkpoints import remove_checkpoints
from pipeline.models.figures import loss_figure
from pipeline.models.finetune import finetune_task
from pipeline.models.loading import load_tokenizer, save_finetuned


def run(stage: StageRun) -> None:
    cfg, task = stage.cfg, stage.task
    settings = stage.settings("finetune").for_task(task.name)
    tokenizer = load_tokenizer(stage.settings("model"))
    checkpoints = stage.out("checkpoints", "finetune", task.name, stage.seed_folder)
    result = finetune_task(
        stage.settings("model"),
        tokenizer,
        task,
        read_split(stage.data(), task.name, "train"),
        read_split(stage.data(), task.name, task.eval_split),
        settings,
        seed=stage.seed,
        max_length=cfg.shared.max_length,
        device=stage.device,
        precision=cfg.precision,
        deterministic=cfg.deterministic,
        compile_settings=stage.settings("compile"),
        checkpoints=checkpoints,
    )

    curve_title = f"{task.name}, seed {stage.seed}"
    with atomic_path(layout.model(stage.inputs_out("finetune"), task.name, stage.seed)) as folder:
        save_finetuned(result.model, tokenizer, folder)
    stage.write_outputs(
        "finetune",
        task.name,
        stage.seed_folder,
        tables={"loss": result.curves, "predictions": result.predictions},
        figures={"loss": loss_figure(result.curves, curve_title, settings.log_every)},
        metrics=result.metrics,
        config={
            "model": cfg.model.name,
            "seed": stage.seed,
            "train_rows": result.metrics["train_rows"],
            "epochs": settings.epochs,
        },
    )
    remove_checkpoints(checkpoints)


if __name__ == "__main__":
    stage_main(run)
