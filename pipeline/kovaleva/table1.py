"""Kovaleva et al. Table 1: dev scores of three training regimes per task.

The fine-tuning stage writes outputs/metrics/finetune/<task>.json with flat keys
`<regime>.<metric>`; this module collects each task's main metric (its task spec's
`main_metric`) for the pre-trained model without fine-tuning, random initialisation plus
fine-tuning, and pre-trained plus fine-tuning.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

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


def table1_figure(table: pd.DataFrame) -> plt.Figure:
    """Grouped bars: per task, the main-metric dev score of each regime."""
    long = table.melt(id_vars=["task", "metric"], value_vars=list(REGIMES), var_name="regime")
    long["regime"] = long["regime"].map(REGIMES)
    long["task"] = long["task"] + " (" + long["metric"] + ")"
    figure, ax = plt.subplots(figsize=(1.8 * len(table) + 2.5, 3.5))
    sns.barplot(long, x="task", y="value", hue="regime", ax=ax)
    ax.set_xlabel("")
    ax.set_ylabel("dev score")
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(1.0, 0.0))
    figure.tight_layout()
    return figure
