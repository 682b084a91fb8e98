"""Kovaleva et al. Table 1: dev scores of three training regimes per task, with intervals.

The fine-tuning stage writes, per task, one row per dev example with the gold label and the
prediction (class id, or the score of a regression task) of each regime:
outputs/plots/finetune/<task>/seed<seed>/predictions.csv, columns idx, label, pretrained,
random_init, finetuned. This module scores every metric of the task (its spec's `metrics`)
for each regime and for `chance`, the best constant prediction, with a 95% percentile
bootstrap interval over the dev rows, and the paired differences `finetuned - random_init`
(what pre-training adds), `random_init - pretrained` (what fine-tuning a random model adds),
`finetuned - pretrained` and `finetuned - chance` (whether the fine-tuned model learned the
task at all: the claims' validity gate), each resampling the same rows for both sides
(pipeline/core/stats.py on the batched GLUE metrics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analyses.table1.settings import Table1Config
from pipeline.core.errors import PipelineError
from pipeline.core.schema import TaskConfig
from pipeline.core.stats import bootstrap_interval, paired_difference_interval
from pipeline.models.batched_metrics import batched_metric

REGIMES = {
    "pretrained": "pre-trained, no fine-tuning",
    "random_init": "random init + fine-tuning",
    "finetuned": "pre-trained + fine-tuning",
}
# The bar a model must clear to have learned anything: a constant prediction, the dev rows'
# most frequent label (its accuracy is the majority share; MCC, F1 of a constant negative and
# the correlation of a constant score are 0).
CHANCE = "chance"
SCORED = {**REGIMES, CHANCE: "best constant prediction (majority class)"}
# difference name -> (first, second): the difference is second - first, on the same rows
DIFFERENCES = {
    "finetuned_minus_random_init": ("random_init", "finetuned"),
    "random_init_minus_pretrained": ("pretrained", "random_init"),
    "finetuned_minus_pretrained": ("pretrained", "finetuned"),
    "finetuned_minus_chance": (CHANCE, "finetuned"),
}
PREDICTION_COLUMNS = ("idx", "label", *REGIMES)


def read_predictions(path: Path, task: str) -> pd.DataFrame:
    """The per-example dev predictions of `task` written by the finetune stage."""
    if not path.exists():
        raise PipelineError(f"{path} not found; run the finetune stage for {task} first")
    frame = pd.read_csv(path)
    missing = [c for c in PREDICTION_COLUMNS if c not in frame]
    if missing:
        raise PipelineError(f"{path} lacks columns {missing}; re-run the finetune stage")
    return frame


def task_rows(
    task: TaskConfig, predictions: pd.DataFrame, n_resamples: int, seed: int
) -> list[dict[str, str | bool | int | float]]:
    """One row per metric of `task`: each regime's score and each difference, with their
    intervals (`_ci_low`, `_ci_high`), whether it is the main metric, and the row count."""
    labels = predictions["label"].to_numpy()  # [N]
    said = {regime: predictions[regime].to_numpy() for regime in REGIMES}  # [N] each
    said[CHANCE] = np.full_like(labels, constant_prediction(task, labels))  # [N]
    rows = []
    for name in task.metrics:
        metric = batched_metric(task, name)
        options = {"n_resamples": n_resamples, "seed": seed, "vectorized": True}
        row = {
            "task": task.name,
            "metric": name,
            "main": name == task.main_metric,
            "examples": len(labels),
        }
        for regime in SCORED:
            row.update(bootstrap_interval(metric, labels, said[regime], **options).as_dict(regime))
        for difference, (first, second) in DIFFERENCES.items():
            interval = paired_difference_interval(
                metric, labels, said[first], said[second], **options
            )
            row.update(interval.as_dict(difference))
        rows.append(row)
    return rows


def constant_prediction(task: TaskConfig, labels: np.ndarray) -> float | int:
    """The best constant prediction on these labels: the most frequent class, or for a
    regression task the mean score (a constant has correlation 0 whatever its value)."""
    if task.is_regression:
        return float(np.mean(labels))
    classes, counts = np.unique(labels, return_counts=True)
    return classes[np.argmax(counts)]


def table1(
    tasks: Sequence[TaskConfig],
    predictions: Mapping[str, pd.DataFrame],
    settings: Table1Config,
    seed: int,
) -> pd.DataFrame:
    """Every metric of every task (rows: task, metric): the regimes' dev scores and their
    paired differences, each with its 95% interval (`settings.bootstrap_resamples` resamples
    seeded by `seed`). `predictions`: {task: predictions}."""
    resamples = settings.bootstrap_resamples
    rows = [
        row for task in tasks for row in task_rows(task, predictions[task.name], resamples, seed)
    ]
    return pd.DataFrame(rows)


def main_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of each task's main metric: Kovaleva et al.'s Table 1."""
    return table[table["main"]].drop(columns="main").reset_index(drop=True)


def table1_metrics(table: pd.DataFrame) -> dict[str, float | int]:
    """Flat metrics of the main rows: `<task>.<regime>` and `<task>.<difference>`, each with
    `_ci_low`, `_ci_high`, and `<task>.examples`."""
    metrics: dict[str, float | int] = {}
    for row in main_rows(table).to_dict("records"):
        for name in [*SCORED, *DIFFERENCES]:
            for suffix in ("", "_ci_low", "_ci_high"):
                metrics[f"{row['task']}.{name}{suffix}"] = float(row[f"{name}{suffix}"])
        metrics[f"{row['task']}.examples"] = int(row["examples"])
    return metrics
