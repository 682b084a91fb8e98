"""Shared drawing: per-head heatmaps and attention maps, each drawn from a long table.

Tables hold one row per cell (`layer`, `head`, value ...); these functions pivot them, so a
figure never holds a number that its table on disk does not. Layers and heads are shown as
they are numbered in the table, so pass the tables as written (numbered from 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

HEATMAP_CMAP = "viridis"


def _panel(
    ax: plt.Axes,
    table: pd.DataFrame,
    rows: str,
    cols: str,
    value: str,
    vmin: float | None,
    vmax: float | None,
    annotate: bool,
) -> None:
    """One heatmap of `value` (rows down, cols across) with its colour bar and, with
    `annotate`, each cell's value. Drawn with matplotlib alone: nothing here renders the
    figure (seaborn's heatmap drew the whole figure once per panel to test its tick labels for
    overlap), so a figure is drawn once, when it is saved."""
    grid = table.pivot_table(index=rows, columns=cols, values=value, aggfunc="first")
    cells = np.ma.masked_invalid(grid.to_numpy(dtype=float))  # [rows, cols]
    mesh = ax.pcolormesh(cells, cmap=HEATMAP_CMAP, vmin=vmin, vmax=vmax)
    ax.set(xlim=(0, cells.shape[1]), ylim=(cells.shape[0], 0))  # first row on top
    for side in ax.spines.values():
        side.set_visible(False)
    ax.figure.colorbar(mesh, ax=ax).outline.set_linewidth(0)
    ax.set_xticks(np.arange(cells.shape[1]) + 0.5, [str(c) for c in grid.columns])
    ax.set_yticks(np.arange(cells.shape[0]) + 0.5, [str(r) for r in grid.index], va="center")
    ax.set(xlabel=grid.columns.name, ylabel=grid.index.name)
    if annotate:
        mesh.update_scalarmappable()
        rgb = mesh.get_facecolors()[:, :3]  # [rows * cols, 3], row-major
        linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        light = linear @ np.array([0.2126, 0.7152, 0.0722]) > 0.408  # relative luminance
        for (y, x), cell in np.ndenumerate(cells.filled(np.nan)):
            if np.isfinite(cell):
                colour = "0.15" if light[y * cells.shape[1] + x] else "w"
                ax.text(
                    x + 0.5,
                    y + 0.5,
                    f"{cell:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color=colour,
                )


def panel_grid(
    count: int, ncols: int, panel_size: tuple[float, float], **subplots
) -> tuple[plt.Figure, np.ndarray]:
    """A figure with `count` panels in rows of at most `ncols`, each `panel_size` inches
    (width, height); axes [rows, cols] (`finish_grid` hides the unused ones)."""
    ncols = min(ncols, count)
    nrows = -(-count // ncols)
    width, height = panel_size
    return plt.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, **subplots
    )


def finish_grid(
    figure: plt.Figure, axes: np.ndarray, used: int, title: str | None = None
) -> plt.Figure:
    """Hide the panels after the first `used`, add the title, tighten the layout."""
    for ax in axes.flat[used:]:
        ax.set_visible(False)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    return figure


def head_heatmaps(
    table: pd.DataFrame,
    value: str,
    facet: str | None = None,
    facets: Sequence[str] | None = None,
    rows: str = "layer",
    cols: str = "head",
    ncols: int = 3,
    shared_scale: bool = False,
    annotate: bool = False,
    title: str | None = None,
) -> plt.Figure:
    """One `rows` x `cols` heatmap of `value` per value of `facet` (or a single one).

    `facets` fixes which facet values are drawn and in what order (default: as they appear).
    With `shared_scale` every panel uses the table's overall min and max.
    """
    panels = [None] if facet is None else list(facets or table[facet].drop_duplicates())
    n_rows = table[rows].nunique()
    n_cols = table[cols].nunique()
    width = max(3.0, 0.45 * n_cols + 1.5)
    height = max(2.5, 0.35 * n_rows + 1.0)
    figure, axes = panel_grid(len(panels), ncols, (width, height))
    vmin, vmax = (table[value].min(), table[value].max()) if shared_scale else (None, None)
    for ax, name in zip(axes.flat, panels, strict=False):
        part = table if name is None else table[table[facet] == name]
        _panel(ax, part, rows, cols, value, vmin, vmax, annotate)
        if name is not None:
            ax.set_title(str(name))
    return finish_grid(figure, axes, len(panels), title)


def attention_grid(
    table: pd.DataFrame,
    title: str | None = None,
    cell_inches: float = 1.3,
) -> plt.Figure:
    """Every head's map of one example: a layers x heads grid of small [n, n] heatmaps.

    `table` has one row per (layer, head, query, key) with the attention `weight`.
    """
    layers = sorted(table["layer"].unique())
    heads = sorted(table["head"].unique())
    n = int(table["query"].max()) + 1
    figure, axes = plt.subplots(
        len(layers),
        len(heads),
        figsize=(cell_inches * len(heads), cell_inches * len(layers)),
        squeeze=False,
    )
    for (layer, head), part in table.groupby(["layer", "head"], sort=True):
        grid = np.zeros((n, n), dtype=np.float32)  # [query, key]
        grid[part["query"].to_numpy(), part["key"].to_numpy()] = part["weight"].to_numpy()
        ax = axes[layers.index(layer), heads.index(head)]
        ax.imshow(grid, cmap=HEATMAP_CMAP, vmin=0.0, vmax=1.0, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
    for layer, row in zip(layers, axes, strict=True):
        row[0].set_ylabel(f"L{layer}", fontsize=8)
    for head, ax in zip(heads, axes[0], strict=True):
        ax.set_title(f"H{head}", fontsize=8)
    if title:
        figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return figure


def attention_map(
    weights: np.ndarray,  # [n, n] (query, key)
    tokens: Sequence[str],
    ax: plt.Axes,
    title: str | None = None,
) -> None:
    """One head's map with the word pieces on both axes."""
    import seaborn as sns

    sns.heatmap(
        weights,
        ax=ax,
        cmap=HEATMAP_CMAP,
        vmin=0.0,
        vmax=1.0,
        xticklabels=list(tokens),
        yticklabels=list(tokens),
        cbar=False,
        square=True,
    )
    ax.tick_params(labelsize=7)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title, fontsize=9)


def map_panels(cells: pd.DataFrame, panels: pd.DataFrame, ncols: int = 3) -> plt.Figure:
    """Single-head maps side by side, with their tokens: one panel per row of `panels`.

    `cells` has (rank, query, key, query_token, key_token, weight); `panels` has (rank,
    layer, head, score, optionally a `note` line) and orders and titles the panels.
    """
    figure, axes = panel_grid(len(panels), ncols, (4.2, 4.2))
    for ax, (_, panel) in zip(axes.flat, panels.iterrows(), strict=False):
        part = cells[cells["rank"] == panel["rank"]]
        n = int(part["query"].max()) + 1
        weights = np.zeros((n, n), dtype=np.float32)  # [query, key]
        weights[part["query"].to_numpy(), part["key"].to_numpy()] = part["weight"].to_numpy()
        tokens = part.drop_duplicates("query").sort_values("query")["query_token"].tolist()
        title = f"L{panel['layer']}-H{panel['head']} (mean {panel['score']:.2f})"
        if "note" in panel:
            title += f"\n{panel['note']}"
        attention_map(weights, tokens, ax, title)
    return finish_grid(figure, axes, len(panels))


def loss_curve_figure(curves: pd.DataFrame, task: str) -> plt.Figure:
    """Mean training loss per logging window (columns variant, step, loss), one line per variant."""
    import seaborn as sns

    figure, axis = plt.subplots(figsize=(5, 3.2))
    sns.lineplot(data=curves, x="step", y="loss", hue="variant", marker="o", ax=axis)
    axis.set_title(f"{task}: training loss")
    return figure
