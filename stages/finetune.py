"""finetune: fine-tune the model on one GLUE task; evaluate it and the Table 1 baselines.

Writes outputs/models/<task>/ (safetensors + tokenizer), outputs/metrics/finetune/<task>.json
(flat keys `<variant>.<metric>`, variants finetuned / pretrained / random_init) and the loss
curve outputs/plots/finetune/<task>.csv.
"""

from __future__ import annotations

import logging
import time

import pandas as pd

from pipeline.core.config import TaskSpec
from pipeline.core.io import atomic_path, save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.encoding import encode
from pipeline.data.glue import read_split
from pipeline.models.loading import load_classifier, load_tokenizer, pick_device
from pipeline.models.training import TrainSettings, check_labels, evaluate, train
from pipeline.report.figures import loss_curve_figure

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.finetune
    task = TaskSpec.from_config(cfg.task)
    device = pick_device(cfg.device)
    tokenizer = load_tokenizer(cfg.model)
    pad_id = tokenizer.pad_token_id

    train_frame = read_split(stage.data(), task.name, "train")
    eval_frame = read_split(stage.data(), task.name, task.eval_split)
    train_labels, eval_labels = train_frame["label"].to_numpy(), eval_frame["label"].to_numpy()
    check_labels(task, train_labels, f"{task.name} train")
    check_labels(task, eval_labels, f"{task.name} {task.eval_split}")
    train_rows = encode(tokenizer, task, train_frame, cfg.shared.max_length)
    eval_rows = encode(tokenizer, task, eval_frame, cfg.shared.max_length)
    train_settings = TrainSettings(
        epochs=settings.epochs,
        batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        warmup_ratio=settings.warmup_ratio,
        weight_decay=settings.weight_decay,
        grad_clip=settings.grad_clip,
        log_every=settings.log_every,
        seed=cfg.seed,
    )

    def score(model) -> dict[str, float]:
        return evaluate(
            model, task, eval_rows, eval_labels, settings.eval_batch_size, pad_id, device
        )

    metrics: dict[str, float] = {"train_rows": len(train_rows), "eval_rows": len(eval_rows)}
    curves = []
    variants = ["finetuned"]
    if settings.baselines.pretrained_no_finetune:
        variants.append("pretrained")
    if settings.baselines.random_init:
        variants.append("random_init")
    for variant in variants:
        model = load_classifier(
            cfg.model,
            tokenizer,
            task.num_labels,
            random_init=variant == "random_init",
            seed=cfg.seed,
        ).to(device)
        if variant != "pretrained":
            started = time.perf_counter()
            curve = train(
                model,
                task,
                train_rows,
                train_labels,
                train_settings,
                pad_id,
                device,
                description=f"{task.name} {variant}",
            )
            metrics[f"{variant}.train_seconds"] = round(time.perf_counter() - started, 1)
            metrics[f"{variant}.final_loss"] = curve[-1][1]
            curves += [{"variant": variant, "step": s, "loss": loss} for s, loss in curve]
        metrics.update({f"{variant}.{name}": value for name, value in score(model).items()})
        if variant == "finetuned":
            with atomic_path(stage.out("models", task.name)) as folder:
                model.save_pretrained(folder, safe_serialization=True)
                tokenizer.save_pretrained(folder)

    curves = pd.DataFrame(curves)
    write_table(stage.out("plots", "finetune", f"{task.name}.csv"), curves)
    save_figure(
        stage.out("figures", "finetune", f"{task.name}_loss.png"),
        loss_curve_figure(curves, task.name),
        caption=f"{task.name}: mean training loss every {settings.log_every} steps, one line "
        "per trained variant (finetuned: the pre-trained model; random_init: random weights).",
        config={"model": cfg.model.name, "train_rows": len(train_rows), "epochs": settings.epochs},
    )
    write_json(stage.out("metrics", "finetune", f"{task.name}.json"), metrics)


if __name__ == "__main__":
    stage_main(run)
