"""finetune: fine-tune the model on one GLUE task; evaluate it and the Table 1 baselines.

Writes outputs/models/<task>/ (safetensors + tokenizer), outputs/metrics/finetune/<task>.json
(flat keys `<variant>.<metric>`, variants finetuned / pretrained / random_init, see
pipeline/models/finetune.py), the loss curves outputs/plots/finetune/<task>/loss.csv and their
figure outputs/figures/finetune/<task>/loss.png. While it trains, it keeps resumable
checkpoints in outputs/checkpoints/finetune/<task>/ (not a DVC output: `dvc repro` would delete
it before the rerun); they are removed once the outputs are written.
"""

from __future__ import annotations

from pipeline.core.config import TaskSpec
from pipeline.core.io import atomic_path, save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.checkpoints import remove_checkpoints
from pipeline.models.figures import loss_figure
from pipeline.models.finetune import FinetuneSettings, finetune_task
from pipeline.models.loading import load_tokenizer, pick_device


def run(stage: StageRun) -> None:
    cfg = stage.cfg
    task = TaskSpec.from_config(cfg.task)
    settings = FinetuneSettings.from_config(cfg.finetune, cfg.seed)
    tokenizer = load_tokenizer(cfg.model)
    device = pick_device(cfg.device)
    checkpoints = stage.out("checkpoints", "finetune", task.name)
    result = finetune_task(
        cfg.model,
        tokenizer,
        task,
        read_split(stage.data(), task.name, "train"),
        read_split(stage.data(), task.name, task.eval_split),
        settings,
        max_length=cfg.shared.max_length,
        device=device,
        precision=cfg.precision,
        checkpoints=checkpoints,
    )

    with atomic_path(stage.out("models", task.name)) as folder:
        result.model.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
    write_table(stage.out("plots", "finetune", task.name, "loss.csv"), result.curves)
    save_figure(
        stage.out("figures", "finetune", task.name, "loss.png"),
        *loss_figure(result.curves, task.name, settings.train.log_every),
        config={
            "model": cfg.model.name,
            "train_rows": result.metrics["train_rows"],
            "epochs": settings.train.epochs,
        },
    )
    write_json(stage.out("metrics", "finetune", f"{task.name}.json"), result.metrics)
    remove_checkpoints(checkpoints)


if __name__ == "__main__":
    stage_main(run)
