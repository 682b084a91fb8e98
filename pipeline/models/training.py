"""Fine-tuning and evaluation of sequence classifiers: a lean, deterministic loop.

A plain loop rather than transformers' Trainer: the whole recipe (AdamW, linear warm-up and
decay, gradient clipping, dynamic padding, length-grouped batches) fits on one screen, runs
the same on CPU and CUDA, and needs no accelerate/TrainingArguments machinery to read.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from omegaconf import DictConfig
from tqdm.auto import tqdm
from transformers import PreTrainedModel, get_linear_schedule_with_warmup

from pipeline.core.config import TaskSpec, settings_from
from pipeline.core.errors import PipelineError
from pipeline.data.batching import batches, length_grouped_order
from pipeline.models.metrics import task_metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainSettings:
    epochs: int
    batch_size: int
    learning_rate: float
    warmup_ratio: float
    weight_decay: float
    grad_clip: float
    log_every: int
    seed: int

    @classmethod
    def from_config(cls, node: DictConfig, seed: int) -> TrainSettings:
        """From the `finetune` config group (its loop settings) and the global seed."""
        return settings_from(cls, node, seed=seed)


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


def _targets(task: TaskSpec, labels: np.ndarray, device: torch.device) -> torch.Tensor:
    dtype = torch.float32 if task.is_regression else torch.long
    return torch.as_tensor(labels, dtype=dtype, device=device)


def train(
    model: PreTrainedModel,
    task: TaskSpec,
    rows: list[dict[str, list[int]]],
    labels: np.ndarray,
    settings: TrainSettings,
    pad_id: int,
    device: torch.device,
    description: str = "train",
) -> list[tuple[int, float]]:
    """Fine-tune `model` in place; returns the (step, loss) curve."""
    torch.manual_seed(settings.seed)
    if task.is_regression:
        start_at_label_mean(model, labels)
    model.to(device).train()
    decay = [p for n, p in model.named_parameters() if not n.endswith(("bias", "weight_norm"))]
    no_decay = [p for n, p in model.named_parameters() if n.endswith(("bias", "weight_norm"))]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": settings.weight_decay}, {"params": no_decay}],
        lr=settings.learning_rate,
        weight_decay=0.0,
    )
    steps_per_epoch = -(-len(rows) // settings.batch_size)
    total = steps_per_epoch * settings.epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(settings.warmup_ratio * total), total
    )
    lengths = [len(r["input_ids"]) for r in rows]
    curve: list[tuple[int, float]] = []
    progress = tqdm(total=total, desc=description, unit="step")
    step, running = 0, []
    for epoch in range(settings.epochs):
        order = length_grouped_order(lengths, settings.batch_size, settings.seed + epoch)
        for chosen, batch in batches(rows, settings.batch_size, pad_id, device, order):
            loss = model(**batch, labels=_targets(task, labels[chosen], device)).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            running.append(loss.item())
            progress.update(1)
            if step % settings.log_every == 0 or step == total:
                mean_loss = float(np.mean(running))
                curve.append((step, mean_loss))
                progress.set_postfix(loss=f"{mean_loss:.4f}", epoch=epoch + 1)
                log.info("%s step %d/%d loss %.4f", description, step, total, mean_loss)
                running = []
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
    **forward_kwargs,
) -> np.ndarray:
    """Logits [N, C] for every row, in row order."""
    model.to(device).eval()
    logits = []
    for _, batch in batches(rows, batch_size, pad_id, device):
        logits.append(model(**batch, **forward_kwargs).logits.float().cpu())
    return torch.cat(logits).numpy()


def evaluate(
    model: PreTrainedModel,
    task: TaskSpec,
    rows: list[dict[str, list[int]]],
    labels: np.ndarray,
    batch_size: int,
    pad_id: int,
    device: torch.device,
) -> dict[str, float]:
    """The task's metrics on `rows`."""
    started = time.perf_counter()
    scores = task_metrics(task, labels, predict(model, rows, batch_size, pad_id, device))
    log.info("eval %s: %s (%.1fs)", task.name, scores, time.perf_counter() - started)
    return scores
