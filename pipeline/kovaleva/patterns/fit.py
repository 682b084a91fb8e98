"""Training the pattern CNN on the labelled maps and scoring it on a held-out split.

`train_classifier` is the patterns_train stage's entry point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split

from pipeline.attention.store import AttentionStore
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import PatternCNN, predict, resize_many, train
from pipeline.kovaleva.patterns.labels import map_ids, read_annotations
from pipeline.kovaleva.patterns.maps import load_maps
from pipeline.kovaleva.patterns.sample import sample_labels
from pipeline.kovaleva.patterns.settings import ClassifierSettings, PatternSettings


@dataclass(frozen=True)
class TrainedClassifier:
    model: PatternCNN
    labels: pd.DataFrame  # the labelled set: one row per map (layers, heads from 0)
    metrics: dict[str, float]  # validation scores, split sizes, label counts
    confusion: pd.DataFrame  # one row per validation map: row (in `labels`), actual, predicted


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
    seed = settings.training.seed
    train_rows, val_rows = split(labels, settings.val_fraction, seed)
    inputs = resize_many(maps, settings.input_size)  # [N, 1, S, S]
    targets = torch.tensor([CLASSES.index(c) for c in labels])  # [N]

    torch.manual_seed(seed)
    model = PatternCNN(settings.channels)
    train(model, inputs[train_rows], targets[train_rows], settings.training)

    probs = predict(model, inputs[val_rows])  # [V, C]
    predicted = np.asarray(CLASSES)[probs.argmax(-1).numpy()]
    metrics = scores(labels[val_rows], predicted)
    metrics.update({"num_train": len(train_rows), "num_val": len(val_rows)})
    confusion = pd.DataFrame({"row": val_rows, "actual": labels[val_rows], "predicted": predicted})
    return model, metrics, confusion


def labelled_maps(
    stores: Mapping[str, AttentionStore], settings: PatternSettings, annotations: Path
) -> pd.DataFrame:
    """The labelled set that `settings.labels` names: the label files of `annotations`
    (human labels winning), or a fresh sample of the stores labelled by the heuristic."""
    if settings.labels == "heuristic":
        return sample_labels(stores, settings.sample, settings.thresholds, settings.seed)
    return read_annotations(annotations, stores)


def train_classifier(
    stores: Mapping[str, AttentionStore], settings: PatternSettings, annotations: Path
) -> TrainedClassifier:
    """The CNN fitted on the labelled set (see `labelled_maps`), with its validation scores
    and the counts of the labels it learnt from."""
    labels = labelled_maps(stores, settings, annotations)
    maps = load_maps(stores, map_ids(labels))
    model, metrics, confusion = fit_and_evaluate(
        maps, labels["label"].tolist(), settings.classifier
    )
    counts = labels["label"].value_counts()
    metrics.update({f"count_{c}": int(counts.get(c, 0)) for c in CLASSES})
    metrics.update(
        num_labels=len(labels),
        num_human=int((labels["source"] == "human").sum()),
        val_fraction=settings.classifier.val_fraction,
    )
    return TrainedClassifier(model, labels, metrics, confusion)
