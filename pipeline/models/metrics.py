"""GLUE metrics computed locally with scipy and scikit-learn (no metric scripts)."""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from pipeline.core.schema import TaskConfig


def accuracy(labels: np.ndarray, predictions: np.ndarray) -> float:
    return float(accuracy_score(labels, predictions))


def f1(labels: np.ndarray, predictions: np.ndarray) -> float:
    """F1 of the positive class (label 1), as GLUE reports for MRPC and QQP."""
    return float(f1_score(labels, predictions, pos_label=1, zero_division=0))


def mcc(labels: np.ndarray, predictions: np.ndarray) -> float:
    """Matthews correlation, CoLA's metric."""
    return float(matthews_corrcoef(labels, predictions))


def pearson(labels: np.ndarray, scores: np.ndarray) -> float:
    if np.std(scores) == 0:
        return 0.0  # a constant prediction has no correlation (scipy would return nan)
    return float(pearsonr(labels, scores)[0])


def spearman(labels: np.ndarray, scores: np.ndarray) -> float:
    if np.std(scores) == 0:
        return 0.0
    return float(spearmanr(labels, scores)[0])


METRICS = {"accuracy": accuracy, "f1": f1, "mcc": mcc, "pearson": pearson, "spearman": spearman}


def predictions_from_logits(task: TaskConfig, logits: np.ndarray) -> np.ndarray:
    """Class indices [N] from logits [N, C], or scores [N] from a regression head [N, 1]."""
    return logits[:, 0] if task.is_regression else logits.argmax(-1)


def task_metrics(task: TaskConfig, labels: np.ndarray, logits: np.ndarray) -> dict[str, float]:
    """Every metric of `task` from gold labels [N] and logits [N, C]."""
    predictions = predictions_from_logits(task, logits)
    return {name: METRICS[name](labels, predictions) for name in task.metrics}
