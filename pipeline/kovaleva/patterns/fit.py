"""Training the pattern CNN on a labelled set and scoring it on a held-out split."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import PatternCNN, TrainSettings, predict, resize_many, train


@dataclass(frozen=True)
class ClassifierSettings:
    input_size: int
    channels: tuple[int, ...]
    val_fraction: float
    train: TrainSettings

    @classmethod
    def from_config(cls, node: Mapping, seed: int) -> ClassifierSettings:
        """From `patterns.classifier` and the global seed."""
        return cls(
            input_size=int(node["input_size"]),
            channels=tuple(int(c) for c in node["channels"]),
            val_fraction=float(node["val_fraction"]),
            train=TrainSettings(
                epochs=int(node["epochs"]),
                batch_size=int(node["batch_size"]),
                learning_rate=float(node["learning_rate"]),
                seed=seed,
            ),
        )


def split(labels: Sequence[str], val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and validation row indices, stratified by class where every class has 2+ rows."""
    labels = np.asarray(labels)
    rows = np.arange(len(labels))
    counts = pd.Series(labels).value_counts()
    stratify = labels if counts.min() >= 2 else None
    train_rows, val_rows = train_test_split(
        rows, test_size=val_fraction, random_state=seed, stratify=stratify
    )
    return np.sort(train_rows), np.sort(val_rows)


def scores(true: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    """Accuracy, macro-F1 over the classes present in `true`, and F1 per present class."""
    present = [c for c in CLASSES if c in set(true)]
    per_class = f1_score(true, predicted, labels=present, average=None, zero_division=0)
    out = {
        "accuracy": float(np.mean(np.asarray(true) == np.asarray(predicted))),
        "macro_f1": float(np.mean(per_class)),
    }
    out.update({f"f1_{c}": float(f) for c, f in zip(present, per_class, strict=True)})
    return out


def fit_and_evaluate(
    maps: Sequence[np.ndarray], labels: Sequence[str], settings: ClassifierSettings
) -> tuple[PatternCNN, dict[str, float], pd.DataFrame]:
    """Train on a seeded split of (map [n, n], class) pairs; score on the rest.

    Returns the model, the scores (see `scores`, plus split sizes) and the validation
    predictions (row, actual, predicted), the table of the confusion matrix.
    """
    labels = np.asarray(labels)
    train_rows, val_rows = split(labels, settings.val_fraction, settings.train.seed)
    inputs = resize_many(maps, settings.input_size)  # [N, 1, S, S]
    targets = torch.tensor([CLASSES.index(c) for c in labels])  # [N]

    torch.manual_seed(settings.train.seed)
    model = PatternCNN(settings.channels)
    train(model, inputs[train_rows], targets[train_rows], settings.train)

    probs = predict(model, inputs[val_rows])  # [V, C]
    predicted = np.asarray(CLASSES)[probs.argmax(-1).numpy()]
    metrics = scores(labels[val_rows], predicted)
    metrics.update({"num_train": len(train_rows), "num_val": len(val_rows)})
    confusion = pd.DataFrame({"row": val_rows, "actual": labels[val_rows], "predicted": predicted})
    return model, metrics, confusion
