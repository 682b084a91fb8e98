"""The figures of the Clark et al. analyses, each drawn from the table written beside it.

Tables come in as the analyses return them, with 0-based `layer` and `head`; every figure
labels layers and heads from 1 (L3, L3-H5), as the written tables do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from pipeline.clark.attend import TARGETS, middle_layers
from pipeline.clark.clustering import BEHAVIOURS
from pipeline.clark.relations import ALL
from pipeline.core.head_names import head_name, layer_name, numbered_from_one
from pipeline.core.stats import Interval

TARGET_TITLES = {
    "cls": "[CLS]",
    "sep": "[SEP]",
    "punct": '"." or ","',
    "self": "self",
    "previous": "previous token",
    "next": "next token",
    "sep->sep": "[SEP] -> [SEP]",
    "other->sep": "other -> [SEP]",
}


# seaborn draws a strip plot's jitter from NumPy's global generator: seeded while it draws, so
# a figure is byte-identical from run to run
JITTER_SEED = 0


@contextmanager
def _seeded_jitter() -> Iterator[None]:
    """NumPy's global generator seeded with JITTER_SEED, its state restored afterwards."""
    state = np.random.get_state()
    np.random.seed(JITTER_SEED)
    try:
        yield
    finally:
        np.random.set_state(state)


def _per_layer(ax: plt.Axes, table: pd.DataFrame, value: str) -> None:
    """One dot per head and the layer's mean as a line, layers on the x axis."""
    table = numbered_from_one(table)
    with _seeded_jitter():
        sns.stripplot(data=table, x="layer", y=value, ax=ax, color="0.55", size=3, jitter=0.15)
    means = table.groupby("layer", as_index=False)[value].mean()
    ax.plot(range(len(means)), means[value], color="C0", marker="o", lw=1.5, label="layer mean")


def targets_per_layer(table: pd.DataFrame) -> plt.Figure:
    """Average attention to each target per layer (Clark et al. Fig. 2), one panel per target."""
    figure, axes = plt.subplots(2, 4, figsize=(14, 6), sharex=True, sharey=True)
    for ax, target in zip(axes.flat, TARGETS, strict=True):
        _per_layer(ax, table[table["target"] == target], "attention")
        ax.set_title(TARGET_TITLES[target])
        ax.set_ylim(0, 1)
        ax.set_ylabel("avg. attention")
    figure.tight_layout()
    return figure


def sep_by_layer(sep: list[Interval], sink: list[Interval]) -> plt.Figure:
    """Each layer's attention to [SEP], and to any sink token, with their intervals (Clark et
    al. Fig. 2's [SEP] panel), against one half; the middle layers shaded."""
    figure, ax = plt.subplots(figsize=(6, 3.5))
    numbers = np.arange(1, len(sep) + 1)
    middle = middle_layers(len(sep))
    ax.axvspan(middle[0] - 0.4, middle[-1] + 0.4, color="0.9", label="middle layers")
    for layers, label in ((sep, "[SEP]"), (sink, "any sink token")):
        estimate = np.array([i.estimate for i in layers])
        errors = [[i.estimate - i.low for i in layers], [i.high - i.estimate for i in layers]]
        ax.errorbar(numbers, estimate, yerr=errors, fmt="o-", capsize=3, label=f"{label}, 95% CI")
    ax.axhline(0.5, color="C3", ls="--", label="one half")
    ax.set_xticks(numbers, [layer_name(n - 1) for n in numbers])
    ax.set_ylim(0, 1)
    ax.set_xlabel("layer")
    ax.set_ylabel("avg. attention")
    ax.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    return figure


def entropy_per_layer(table: pd.DataFrame) -> plt.Figure:
    """Head entropies per layer against uniform attention (Clark et al. Fig. 4), and [CLS]'s."""
    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, value, title in zip(
        axes, ("entropy", "cls_entropy"), ("all tokens", "[CLS] token"), strict=True
    ):
        _per_layer(ax, table, value)
        ax.axhline(table["uniform"].iloc[0], color="C3", ls="--", label="uniform attention")
        ax.set_title(f"Attention entropy, {title}")
        ax.set_ylabel("entropy (nats)")
    axes[0].legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure


def head_clusters(table: pd.DataFrame) -> plt.Figure:
    """MDS embedding of the heads (Clark et al. Fig. 6), coloured by layer (L1, L2, ...) and
    by behaviour."""
    figure, axes = plt.subplots(1, 2, figsize=(12, 5), sharex=True, sharey=True)
    layers = [layer_name(layer) for layer in sorted(set(table["layer"]))]
    sns.scatterplot(
        data=table.assign(layer=table["layer"].map(layer_name)),
        x="x",
        y="y",
        hue="layer",
        hue_order=layers,
        palette="viridis",
        ax=axes[0],
        s=40,
    )
    present = [b for b in BEHAVIOURS if b in set(table["behaviour"])]
    sns.scatterplot(
        data=table,
        x="x",
        y="y",
        hue="behaviour",
        hue_order=present,
        palette="tab10",
        ax=axes[1],
        s=40,
    )
    for ax, hue in zip(axes, ("layer", "behaviour"), strict=True):
        ax.set_title(f"Heads embedded by Jensen-Shannon distance (MDS), by {hue}")
        ax.legend(fontsize=7, loc="best", title=hue, title_fontsize=7)
    figure.tight_layout()
    return figure


def _error_bars(table: pd.DataFrame, column: str) -> np.ndarray:
    """Whisker lengths [2, N] below and above `column` from its `_ci_low`/`_ci_high` columns."""
    return np.stack(
        [table[column] - table[f"{column}_ci_low"], table[f"{column}_ci_high"] - table[column]]
    )


def relation_heads(table: pd.DataFrame) -> plt.Figure:
    """Best head vs best fixed offset per relation, on the report split (Clark et al. Table 2),
    with the 95% interval of each accuracy as whiskers."""
    figure, ax = plt.subplots(figsize=(max(6, 0.45 * len(table)), 4))
    positions = np.arange(len(table))
    width = 0.4
    for shift, column, label in (
        (-width / 2, "head_accuracy", "best attention head"),
        (width / 2, "offset_accuracy", "best fixed offset"),
    ):
        ax.bar(
            positions + shift,
            table[column],
            width,
            yerr=_error_bars(table, column),
            capsize=2,
            label=label,
            error_kw={"lw": 0.8},
        )
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    labels = [f"{row.relation}\n{head_name(row.layer, row.head)}" for row in table.itertuples()]
    ax.set_xticks(positions, labels, fontsize=7, rotation=60)
    ax.legend(fontsize=8)
    ax.set_title(f"Dependency relations: best head vs best offset (95% CI); last: {ALL}")
    figure.tight_layout()
    return figure


def coref_heads(table: pd.DataFrame, comparison: dict[str, Interval]) -> plt.Figure:
    """Per-head antecedent accuracy on the report split, as a layer x head heatmap, beside
    the best head against the nearest-name baseline with 95% intervals as whiskers."""
    grid = numbered_from_one(table).pivot_table(
        index="layer", columns="head", values="report_accuracy"
    )
    figure, (ax, bars) = plt.subplots(
        1, 2, figsize=(11, 0.45 * len(grid) + 2), gridspec_kw={"width_ratios": [4, 1]}
    )
    sns.heatmap(grid, ax=ax, cmap="viridis", annot=True, fmt=".2f", annot_kws={"fontsize": 6})
    ax.set_title("GAP: share of pronouns attending most to the correct name, per head")
    names, found = list(comparison), list(comparison.values())
    estimates = np.array([interval.estimate for interval in found])
    whiskers = np.array([[i.estimate - i.low for i in found], [i.high - i.estimate for i in found]])
    bars.bar(range(len(names)), estimates, yerr=whiskers, capsize=4, color=["C0", "C7"])
    bars.set_xticks(range(len(names)), names, fontsize=7, rotation=30)
    bars.set_ylim(0, 1)
    bars.set_title("accuracy (95% CI)", fontsize=9)
    figure.tight_layout()
    return figure
