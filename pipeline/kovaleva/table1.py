"""Kovaleva et al. Table 1: dev scores of three training regimes per task, with intervals.

The fine-tuning stage writes, per task, one row per dev example with the gold label and the
prediction (class id, or the score of a regression task) of each regime:
outputs/plots/finetune/<task>/seed<seed>/predictions.csv, columns idx, label, pretrained,
random_init, finetuned. This module scores every metric of the task (its spec's `metrics`)
for each regime with a 95% percentile bootstrap interval over the dev rows, and the paired
differences `finetuned - random_init` (what pre-training adds) and `random_init -
pretrained` (what fine-tuning a random model adds), each resampling the same rows for both
regimes (pipeline/core/stats.py on the batched GLUE metrics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from pipeline.core.config import TaskSpec
from pipeline.core.errors import PipelineError
from pipeline.core.stats import bootstrap_interval, paired_difference_interval
from pipeline.models.batched_metrics import batched_metric

REGIMES = {
    "pretrained": "pre-trained, no fine-tuning",
    "random_init": "random init + fine-tuning",
    "finetuned": "pre-trained + fine-tuning",
}
# difference name -> (first, second): the difference is second - first, on the same rows
DIFFERENCES = {
    "finetuned_minus_random_init": ("random_init", "finetuned"),
    "random_init_minus_pretrained": ("pretrained", "random_init"),
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
    task: TaskSpec, predictions: pd.DataFrame, n_resamples: int, seed: int
) -> list[dict[str, str | bool | int | float]]:
    """One row per metric of `task`: each regime's score and each difference, with their
    intervals (`_ci_low`, `_ci_high`), whether it is the main metric, and the row count."""
    labels = predictions["label"].to_numpy()  # [N]
    said = {regime: predictions[regime].to_numpy() for regime in REGIMES}  # [N] each
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
        for regime in REGIMES:
            row.update(bootstrap_interval(metric, labels, said[regime], **options).as_dict(regime))
        for difference, (first, second) in DIFFERENCES.items():
            interval = paired_difference_interval(
                metric, labels, said[first], said[second], **options
            )
            row.update(interval.as_dict(difference))
        rows.append(row)
    return rows


def table1(
    tasks: Sequence[TaskSpec],
    predictions: Mapping[str, pd.DataFrame],
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Every metric of every task (rows: task, metric): the regimes' dev scores and their
    paired differences, each with its 95% interval. `predictions`: {task: predictions}."""
    rows = [
        row for task in tasks for row in task_rows(task, predictions[task.name], n_resamples, seed)
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
        for name in [*REGIMES, *DIFFERENCES]:
            for suffix in ("", "_ci_low", "_ci_high"):
                metrics[f"{row['task']}.{name}{suffix}"] = float(row[f"{name}{suffix}"])
        metrics[f"{row['task']}.examples"] = int(row["examples"])
    return metrics
