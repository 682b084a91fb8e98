"""The cross-seed figures, each drawn from a table the cross_seed stage writes beside it.

- `metric_by_seed`: per task, the fine-tuned model's main metric for every seed (dots),
  their mean (a grey bar) and +- one standard deviation (an error bar, from two seeds on).
- `head_effects_scatter`: per task, every head's ablation effect (`delta`, in points of the
  metric) under the first seed against the second: points near the diagonal are heads
  whose effect the seed does not change.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pipeline.core.io import Captioned
from pipeline.core.layout import seed_folder
from pipeline.extensions.cross_seed import KEYS, SeedRuns

POINTS = 100.0  # deltas are drawn in points (x100) of the metric, as in the ablate figures


def metric_by_seed(metrics: pd.DataFrame) -> Captioned:
    """`metrics` holds task, seed, metric, finetuned (the cross_seed metric table)."""
    tasks = list(dict.fromkeys(metrics["task"]))
    figure, axis = plt.subplots(figsize=(1.6 + 1.3 * len(tasks), 3.6))
    for x, task in enumerate(tasks):
        values = metrics.loc[metrics["task"] == task, "finetuned"].to_numpy()  # [seeds]
        spread = values.std(ddof=1) if len(values) > 1 else 0.0
        axis.errorbar(x, values.mean(), yerr=spread, fmt="_", ms=24, capsize=6, color="#888888")
        axis.scatter(np.full(len(values), x), values, color="#1f4e79", zorder=3, s=18)
    names = metrics.drop_duplicates("task")["metric"]
    axis.set_xticks(range(len(tasks)), [f"{t}\n({m})" for t, m in zip(tasks, names, strict=True)])
    axis.set(ylabel="fine-tuned metric", xlim=(-0.6, len(tasks) - 0.4))
    axis.set_title("Fine-tuned metric per seed")
    seeds = sorted(metrics["seed"].unique())
    caption = (
        f"The fine-tuned model's main metric on the same dev rows for each of the {len(seeds)} "
        "fine-tuning seeds (dots), their mean (grey bar) and +- one standard deviation over "
        "seeds "
        "(error bar; none with one seed)."
    )
    return Captioned(figure, caption, {"seeds": [int(s) for s in seeds]})


def head_effects_scatter(heads: dict[str, dict[int, pd.DataFrame]]) -> Captioned:
    """`heads`: task -> seed -> heads.csv (layer, head, delta); each task has >= 2 seeds."""
    figure, axes = plt.subplots(1, len(heads), figsize=(3.2 * len(heads), 3.4), squeeze=False)
    for axis, (task, by_seed) in zip(axes[0], heads.items(), strict=True):
        first, second = sorted(by_seed)[:2]
        paired = by_seed[first][[*KEYS, "delta"]].merge(by_seed[second][[*KEYS, "delta"]], on=KEYS)
        x, y = paired["delta_x"] * POINTS, paired["delta_y"] * POINTS
        limit = max(float(np.abs(np.r_[x, y]).max()), 1e-9) * 1.1
        axis.plot([-limit, limit], [-limit, limit], color="#bbbbbb", lw=1)
        axis.scatter(x, y, s=10, color="#1f4e79", alpha=0.7)
        axis.set(xlim=(-limit, limit), ylim=(-limit, limit), title=task)
        axis.set(
            xlabel=f"delta x100, {seed_folder(first)}", ylabel=f"delta x100, {seed_folder(second)}"
        )
    caption = (
        "Each head's ablation effect (metric with the head disabled - baseline, x100) under "
        "the first fine-tuning seed against the second, per task; the grey line is equality."
    )
    return Captioned(figure, caption, {"tasks": list(heads)})


def cross_seed_figures(runs: Sequence[SeedRuns], metric: pd.DataFrame) -> dict[str, Captioned]:
    """The metric per seed and, from two seeds on, the head effects of two seeds, by file stem;
    `runs`: one per task; `metric`: the cross_seed metric table of every task."""
    figures = {"metric_by_seed": metric_by_seed(metric)}
    if len(runs[0].metrics) > 1:
        figures["head_effects"] = head_effects_scatter({r.task.name: r.heads for r in runs})
    return figures
