"""The GLUE metrics of metrics.py over many resamples at once, for the statistics module's
vectorized bootstrap and permutation tests (pipeline/core/stats.py).

Each function takes gold labels and predictions of shape [..., N] (leading batch axes, one
per resample; either may be [N] and broadcast) and returns [...]: the metric of each batch
entry. Edge cases follow metrics.py: F1 and MCC are 0 where sklearn divides by zero, and a
constant prediction has correlation 0. tests/core/test_stats.py holds each equal to metrics.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import rankdata

from pipeline.core.schema import TaskConfig

Batched = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0."""
    numerator, denominator = np.broadcast_arrays(
        np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    )
    out = np.zeros(numerator.shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def accuracy(labels: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    return np.mean(labels == predictions, axis=-1)


def f1(labels: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """F1 of the positive class (label 1): 2 tp / (2 tp + fp + fn)."""
    gold, said = labels == 1, predictions == 1
    true_positives = np.sum(gold & said, axis=-1)
    return _ratio(2 * true_positives, np.sum(gold, axis=-1) + np.sum(said, axis=-1))


def mcc(labels: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """Matthews correlation for any number of classes (Gorodkin's R_K, as sklearn):
    (c n - t.p) / sqrt((n^2 - t.t)(n^2 - p.p)), t and p the per-class counts of gold labels
    and predictions, c the correct ones, n the examples."""
    labels, predictions = np.broadcast_arrays(labels, predictions)
    classes = np.union1d(np.unique(labels), np.unique(predictions))
    gold = np.stack([np.sum(labels == k, axis=-1) for k in classes], axis=-1)  # [..., K]
    said = np.stack([np.sum(predictions == k, axis=-1) for k in classes], axis=-1)
    correct = np.sum(labels == predictions, axis=-1).astype(float)
    n = float(labels.shape[-1])
    covariance = correct * n - np.sum(gold * said, axis=-1)
    spread = (n**2 - np.sum(gold * gold, axis=-1)) * (n**2 - np.sum(said * said, axis=-1))
    return _ratio(covariance, np.sqrt(spread.astype(float)))


def pearson(labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    labels, scores = np.broadcast_arrays(
        np.asarray(labels, dtype=float), np.asarray(scores, dtype=float)
    )
    x = labels - labels.mean(axis=-1, keepdims=True)
    y = scores - scores.mean(axis=-1, keepdims=True)
    spread = np.sqrt(np.sum(x * x, axis=-1) * np.sum(y * y, axis=-1))
    return np.clip(_ratio(np.sum(x * y, axis=-1), spread), -1.0, 1.0)


def spearman(labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Pearson correlation of the ranks (ties get their mean rank)."""
    labels, scores = np.broadcast_arrays(labels, scores)
    return pearson(rankdata(labels, axis=-1), rankdata(scores, axis=-1))


BATCHED = {"accuracy": accuracy, "f1": f1, "mcc": mcc, "pearson": pearson, "spearman": spearman}


def batched_metric(task: TaskConfig, name: str | None = None) -> Batched:
    """The batched form of metric `name` of `task` (its main metric by default)."""
    return BATCHED[name or task.main_metric]
