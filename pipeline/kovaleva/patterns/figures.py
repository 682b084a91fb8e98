"""Figs. 1 and 2 of Kovaleva et al. (2019), each drawn from a table the stage also writes.

The tables count layers and heads from 0 (the files from 1); a figure names a head `L3-H5`.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from pipeline.core.heads import head_name
from pipeline.kovaleva.patterns import CLASSES

VARIANT_ORDER = ("pretrained", "finetuned")
PALETTE = dict(zip(CLASSES, sns.color_palette("colorblind", len(CLASSES)), strict=True))
SHARES_CAPTION = (
    "Share of each attention-pattern class (CNN) among all heads' maps on dev examples, "
    "per task, for the pre-trained and the fine-tuned model (paper Fig. 2)."
)
EXAMPLES_CAPTION = (
    "One fine-tuned attention map per pattern class: the CNN's most confident prediction "
    "that the heuristic agrees with (paper Fig. 1). Rows: queries; columns: keys."
)


def pattern_shares_figure(shares: pd.DataFrame) -> plt.Figure:
    """Fig. 2: per task, stacked bars of each class's share of the heads' maps, one panel per
    model variant. `shares`: columns task, variant, class, share (see apply.class_shares)."""
    present = set(shares["variant"])
    variants = [v for v in VARIANT_ORDER if v in present] + sorted(present - set(VARIANT_ORDER))
    tasks = list(dict.fromkeys(shares["task"]))
    fig, axes = plt.subplots(
        1, len(variants), figsize=(1.2 + 1.1 * len(tasks) * len(variants), 3.6), sharey=True
    )
    axes = [axes] if len(variants) == 1 else list(axes)
    for ax, variant in zip(axes, variants, strict=True):
        grid = (
            shares[shares["variant"] == variant]
            .pivot_table(index="task", columns="class", values="share", aggfunc="first")
            .reindex(index=tasks, columns=list(CLASSES))
            .fillna(0.0)
        )
        bottom = pd.Series(0.0, index=grid.index)
        for name in CLASSES:
            ax.bar(grid.index, grid[name], bottom=bottom, color=PALETTE[name], label=name)
            bottom += grid[name]
        ax.set_title(variant)
        ax.set_ylim(0, 1)
        ax.set_xlabel("task")
    axes[0].set_ylabel("share of maps")
    handles, names = axes[-1].get_legend_handles_labels()
    axes[-1].legend(  # top to bottom, as the bars stack
        handles[::-1], names[::-1], loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False
    )
    fig.tight_layout()
    return fig


def pattern_examples_figure(table: pd.DataFrame, max_ticks: int = 30) -> plt.Figure:
    """Fig. 1: one attention map per class. `table`: the long table of
    examples.example_maps_table (class, map id, query, key, query_token, key_token, weight)."""
    names = [c for c in CLASSES if c in set(table["class"])]
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3.6))
    axes = [axes] if len(names) == 1 else list(axes)
    for ax, name in zip(axes, names, strict=True):
        cells = table[table["class"] == name]
        grid = cells.pivot(index="query", columns="key", values="weight")  # [n, n]
        tokens = cells.drop_duplicates("key").sort_values("key")["key_token"].tolist()
        show = len(tokens) <= max_ticks
        sns.heatmap(
            grid,
            ax=ax,
            cmap="Blues",
            vmin=0,
            square=True,
            cbar=False,
            xticklabels=tokens if show else False,
            yticklabels=tokens if show else False,
        )
        ax.tick_params(labelsize=5, length=0)
        first = cells.iloc[0]
        ax.set_title(
            f"{name}\n{first['task']} ex. {first['example_id']}, "
            f"{head_name(first['layer'], first['head'])}",
            fontsize=9,
        )
        ax.set_xlabel("")
        ax.set_ylabel("")
    fig.tight_layout()
    return fig
