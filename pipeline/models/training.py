"""Fine-tuning and evaluation of sequence classifiers: a lean, deterministic loop.

A plain loop rather than transformers' Trainer: the whole recipe (AdamW, linear warm-up and
decay, gradient clipping, dynamic padding, length-grouped batches) fits on one screen, runs
the same on CPU and CUDA, and needs no accelerate/TrainingArguments machinery to read.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel, get_linear_schedule_with_warmup

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.errors import PipelineError
from pipeline.core.precision import autocast, device_dtype, grad_scaler, set_determinism
from pipeline.core.schema import CompileConfig, TaskConfig
from pipeline.data.batching import in_order, length_grouped_batches, padded_batches
from pipeline.models.checkpoints import Checkpoints, random_states, restore_random_states
from pipeline.models.compilation import batch_shapes, compiled, pad_multiple
from pipeline.models.metrics import predictions_from_logits, task_metrics

log = logging.getLogger(__name__)


def start_at_label_mean(model: PreTrainedModel, labels: np.ndarray) -> None:
    """Set a regression head's output bias to the mean training label.

    A fresh head predicts ~0 while STS-B's scores average ~2.7; the large early squared
    errors then flow into the encoder and can collapse it to predicting the mean. Starting
    at the mean leaves only the variation to learn.
    """
    head = [m for m in model.modules() if isinstance(m, torch.nn.Linear)][-1]  # [.., 1]
    if head.out_features != 1 or head.bias is None:
        raise PipelineError(f"{type(model).__name__}: cannot find a 1-output regression head")
    with torch.no_grad():
        head.bias.fill_(float(np.mean(labels)))


def _targets(task: TaskConfig, labels: np.ndarray, device: torch.device) -> torch.Tensor:
    dtype = torch.float32 if task.is_regression else torch.long
    return torch.as_tensor(labels, dtype=dtype, device=device)


def set_problem_type(model: PreTrainedModel, task: TaskConfig) -> None:
    """Write into the model's config the `problem_type` that transformers sets during its first
    training step (regression for one output, else single-label classes), so that the saved
    config.json is the same whether or not a resumed run takes a step."""
    model.config.problem_type = (
        "regression" if task.is_regression else "single_label_classification"
    )


def _optimizer(
    model: PreTrainedModel, settings: FinetuneConfig, device: torch.device
) -> torch.optim.AdamW:
    """AdamW with weight decay on every weight but biases and norm weights. Fused (one kernel
    for all tensors) on CUDA; on CPU the plain loop, whose float32 results the committed
    metrics hold (the fused CPU kernel rounds differently: ~3e-8 after 20 steps)."""
    decay = [p for n, p in model.named_parameters() if not n.endswith(("bias", "weight_norm"))]
    no_decay = [p for n, p in model.named_parameters() if n.endswith(("bias", "weight_norm"))]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": settings.weight_decay}, {"params": no_decay}],
        lr=settings.learning_rate,
        weight_decay=0.0,
        fused=device.type == "cuda",
    )


def window_losses(running: list[torch.Tensor]) -> list[float]:
    """The window's per-step losses as floats: one read from the device for all of them."""
    return torch.stack(running).tolist() if running else []


def train(
    model: PreTrainedModel,
    task: TaskConfig,
    rows: list[dict[str, list[int]]],
    labels: np.ndarray,
    settings: FinetuneConfig,
    seed: int,
    pad_id: int,
    device: torch.device,
    description: str = "train",
    precision: str = "fp32",
    checkpoints: Checkpoints | None = None,
    deterministic: bool = True,
    compile_settings: CompileConfig | None = None,
) -> list[tuple[int, float]]:
    """Fine-tune `model` in place; returns the (step, loss) curve.

    `precision` (a `precision` setting, pipeline/core/precision.py; default float32) sets
    autocast and, for fp16, loss scaling; `deterministic` (the `deterministic` setting)
    chooses deterministic kernels for the process; `compile_settings` (the `compile`
    setting; default eager) compiles the forward pass. With `checkpoints`, the run saves
    its state every `checkpoints.every` steps and first resumes from a saved state of the
    same fingerprint: the result is the uninterrupted run's.
    """
    torch.manual_seed(seed)
    set_determinism(deterministic, device)
    if task.is_regression:
        start_at_label_mean(model, labels)
    set_problem_type(model, task)
    model.to(device).train()
    optimizer = _optimizer(model, settings, device)
    steps_per_epoch = -(-len(rows) // settings.batch_size)
    total = steps_per_epoch * settings.epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(settings.warmup_ratio * total), total
    )
    scaler = grad_scaler(device_dtype(precision, device), device)
    lengths = [len(r["input_ids"]) for r in rows]
    multiple = pad_multiple(compile_settings)
    epochs = [
        length_grouped_batches(lengths, settings.batch_size, seed + epoch)
        for epoch in range(settings.epochs)
    ]  # each epoch's batches: lists of row indices
    shapes = batch_shapes(lengths, [b for batches in epochs for b in batches], multiple)
    forward = compiled(model, compile_settings, shapes)
    # steps done, (step, mean loss) points, the window's losses (0-d tensors on the device:
    # read back once per log line, not once per step, so a CUDA step never waits for the host)
    step, curve, running = 0, [], []
    resumed = checkpoints.load() if checkpoints else None
    if resumed:
        model.load_state_dict(resumed["model"])
        optimizer.load_state_dict(resumed["optimizer"])
        scheduler.load_state_dict(resumed["scheduler"])
        scaler.load_state_dict(resumed["scaler"])
        restore_random_states(resumed["random"])
        step, curve = resumed["step"], resumed["curve"]
        running = [torch.tensor(x, device=device) for x in resumed["running"]]
    progress = tqdm(total=total, initial=step, desc=description, unit="step")
    try:
        for epoch in range(step // steps_per_epoch, settings.epochs):
            done = step - epoch * steps_per_epoch  # batches of this epoch trained before a resume
            remaining = epochs[epoch][done:]
            for chosen, batch in padded_batches(rows, remaining, pad_id, device, multiple):
                with autocast(precision, device):
                    loss = forward(**batch, labels=_targets(task, labels[chosen], device)).loss
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)  # clip the true gradients (no-op unless fp16)
                torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                running.append(loss.detach().float())
                progress.update(1)
                if step % settings.log_every == 0 or step == total:
                    mean_loss = float(np.mean(window_losses(running)))
                    curve.append((step, mean_loss))
                    progress.set_postfix(loss=f"{mean_loss:.4f}", epoch=epoch + 1)
                    log.info("%s step %d/%d loss %.4f", description, step, total, mean_loss)
                    running = []
                if checkpoints and checkpoints.due(step, total):
                    checkpoints.save_in_background(
                        {
                            "step": step,
                            "model": model.state_dict(),
                            "optimizer": optimizer.state_dict(),
                            "scheduler": scheduler.state_dict(),
                            "scaler": scaler.state_dict(),
                            "random": random_states(),
                            "curve": curve,
                            "running": window_losses(running),
                        }
                    )
    finally:  # a kill, too, leaves the last checkpoint whole on disk
        if checkpoints:
            checkpoints.wait()
    progress.close()
    model.eval()
    return curve


@torch.no_grad()
def predict(
    model: PreTrainedModel,
    rows: list[dict[str, list[int]]],
    batch_size: int,
    pad_id: int,
    device: torch.device,
    precision: str = "fp32",
    compile_settings: CompileConfig | None = None,
    **forward_kwargs,
) -> np.ndarray:
    """Logits [N, C] for every row, in row order (float32, whatever `precision` computes in;
    `compile_settings`: the `compile` setting, default eager)."""
    model.to(device).eval()
    lengths = [len(r["input_ids"]) for r in rows]
    index_batches = in_order(len(rows), batch_size)
    multiple = pad_multiple(compile_settings)
    forward = compiled(model, compile_settings, batch_shapes(lengths, index_batches, multiple))
    logits = []
    for _, batch in padded_batches(rows, index_batches, pad_id, device, multiple):
        with autocast(precision, device):
            logits.append(forward(**batch, **forward_kwargs).logits.float().cpu())
    return torch.cat(logits).numpy()


def evaluate(
    model: PreTrainedModel,
    task: TaskConfig,
    rows: list[dict[str, list[int]]],
    labels: np.ndarray,
    batch_size: int,
    pad_id: int,
    device: torch.device,
    precision: str = "fp32",
    compile_settings: CompileConfig | None = None,
) -> tuple[dict[str, float], np.ndarray]:
    """The task's metrics on `rows`, and the predictions they score: [N] class ids, or
    scores for a regression task."""
    started = time.perf_counter()
    logits = predict(model, rows, batch_size, pad_id, device, precision, compile_settings)
    scores = task_metrics(task, labels, logits)
    log.info("eval %s: %s (%.1fs)", task.name, scores, time.perf_counter() - started)
    return scores, predictions_from_logits(task, logits)
