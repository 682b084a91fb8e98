"""The ablation figures, each drawn from the table the ablate stage writes beside it.

- `head_delta_heatmap` (paper Fig. 8): layers x heads, the change in the task metric when
  that one head is disabled, annotated, on a diverging scale centred at 0.
- `layer_delta_bars` (paper Fig. 9): the change when a whole layer is disabled.
- `pruning_curve_plot` (Michel et al. Fig. 3 style): metric against fraction of heads pruned.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from pipeline.core.heads import numbered_from_one

POINTS = 100.0  # deltas are drawn in points (x100) of the metric


def head_delta_heatmap(heads: pd.DataFrame, metric: str, title: str) -> plt.Figure:
    """`heads` has layer, head, delta; cells show delta x 100."""
    grid = numbered_from_one(heads).pivot_table(index="layer", columns="head", values="delta")
    grid = grid * POINTS
    limit = max(float(grid.abs().max().max()), 1e-9)
    width = max(4.0, 0.55 * grid.shape[1] + 1.5)
    figure, ax = plt.subplots(figsize=(width, 0.5 * grid.shape[0] + 1.4))
    sns.heatmap(
        grid,
        ax=ax,
        cmap="RdBu",
        center=0.0,
        vmin=-limit,
        vmax=limit,
        annot=True,
        fmt=".1f",
        annot_kws={"fontsize": 7},
        cbar_kws={"label": f"change in {metric} (x100)"},
    )
    ax.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def layer_delta_bars(layers: pd.DataFrame, metric: str, title: str) -> plt.Figure:
    """`layers` has layer, delta; one bar per disabled layer, delta x 100."""
    data = numbered_from_one(layers).assign(change=layers["delta"] * POINTS)
    figure, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(data) + 2), 3.2))
    sns.barplot(data=data, x="layer", y="change", ax=ax, color="tab:blue", native_scale=True)
    ax.axhline(0.0, color="black", linewidth=0.8)
    for patch, value in zip(ax.patches, data["change"], strict=False):
        ax.annotate(
            f"{value:.1f}",
            (patch.get_x() + patch.get_width() / 2, value),
            ha="center",
            va="bottom" if value >= 0 else "top",
            fontsize=7,
        )
    ax.set_xlabel("disabled layer")
    ax.set_ylabel(f"change in {metric} (x100)")
    ax.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def pruning_curve_plot(curve: pd.DataFrame, metric: str, title: str) -> plt.Figure:
    """`curve` has fraction_pruned and the metric column."""
    figure, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=curve, x="fraction_pruned", y=metric, marker="o", ax=ax)
    ax.axhline(curve[metric].iloc[0], color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("fraction of heads pruned")
    ax.set_ylabel(metric)
    ax.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure
