"""Kovaleva et al. Table 1: dev scores of three training regimes per task.

The fine-tuning stage writes outputs/metrics/finetune/<task>.json with flat keys
`<regime>.<metric>`; this module collects each task's main metric (its task spec's
`main_metric`) for the pre-trained model without fine-tuning, random initialisation plus
fine-tuning, and pre-trained plus fine-tuning.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from pipeline.core.errors import PipelineError

REGIMES = {
    "pretrained": "pre-trained, no fine-tuning",
    "random_init": "random init + fine-tuning",
    "finetuned": "pre-trained + fine-tuning",
}


def table1(
    metrics: Mapping[str, Mapping[str, float]], main_metric: Mapping[str, str]
) -> pd.DataFrame:
    """One row per task: task, metric, and one column of dev scores per regime.

    `metrics`: {task: fine-tuning metrics JSON}; `main_metric`: {task: metric name}.
    """
    rows = []
    for task, values in metrics.items():
        metric = main_metric[task]
        row = {"task": task, "metric": metric}
        for regime in REGIMES:
            key = f"{regime}.{metric}"
            if key not in values:
                raise PipelineError(
                    f"fine-tuning metrics of {task} lack '{key}'; re-run the finetune stage"
                )
            row[regime] = float(values[key])
        rows.append(row)
    return pd.DataFrame(rows, columns=["task", "metric", *REGIMES])


def table1_metrics(table: pd.DataFrame) -> dict[str, float]:
    """Flat metrics of a `table1` table: `<task>.<regime>` -> dev score."""
    return {
        f"{row.task}.{regime}": float(getattr(row, regime))
        for row in table.itertuples()
        for regime in REGIMES
    }
