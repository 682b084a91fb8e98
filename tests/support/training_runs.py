"""Short fine-tuning runs on random rows, and a kill in the middle of one, for resume tests."""

from __future__ import annotations

import numpy as np
import torch

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.schema import load_task
from pipeline.models import training
from pipeline.models.loading import load_classifier
from pipeline.models.training import train

SETTINGS = FinetuneConfig(
    epochs=2,
    batch_size=4,
    eval_batch_size=4,
    learning_rate=1e-3,
    warmup_ratio=0.1,
    weight_decay=0.01,
    grad_clip=1.0,
    log_every=2,
    checkpoint_every=0,
)


SEED = 7
CPU = torch.device("cpu")


class Killed(Exception):
    """Stands for a kill in the middle of a run."""


def random_rows() -> tuple[list[dict[str, list[int]]], np.ndarray]:
    """30 rows of random word pieces (lengths 5-20) and binary labels: 8 steps per epoch."""
    rng = np.random.default_rng(0)
    rows = []
    for length in rng.integers(5, 21, size=30):
        ids = [101, *rng.integers(1000, 5000, size=length - 2).tolist(), 102]
        rows.append({"input_ids": ids, "token_type_ids": [0] * length})
    return rows, rng.integers(0, 2, size=30)


def fresh_model(tiny_model_cfg, tokenizer):
    return load_classifier(tiny_model_cfg, tokenizer, 2, seed=3)


def run(model, data, checkpoints=None, device=CPU, precision="fp32", compile_settings=None):
    rows, labels = data
    task = load_task("sst2")
    return train(
        model, task, rows, labels, SETTINGS, SEED, 0, device,
        precision=precision, checkpoints=checkpoints, compile_settings=compile_settings,
    )  # fmt: skip


def kill_after(monkeypatch, steps: int) -> None:
    """Make the training loop raise once `steps` batches have been trained on."""
    real, seen = training.padded_batches, {"batches": 0}

    def batches(*args, **kwargs):
        for item in real(*args, **kwargs):
            if seen["batches"] == steps:
                raise Killed
            seen["batches"] += 1
            yield item

    monkeypatch.setattr(training, "padded_batches", batches)


def same_weights(first, second) -> bool:
    a, b = first.state_dict(), second.state_dict()
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
