"""Sheets for labelling by eye: a few maps per PNG, each with its word pieces and its id.

A sheet shows what an annotator needs and nothing more: the map (rows: queries, columns:
keys, darker = more attention), the word pieces on both axes, the map id and its length.
Never the rule's class or another annotator's label.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt

from pipeline.core.io import atomic_path
from pipeline.kovaleva.patterns.mapsets import LabelledMap

MAPS_PER_SHEET = 6
COLUMNS = 3


def draw_map(ax: plt.Axes, map_id: str, entry: LabelledMap) -> None:
    """One map with its word pieces on both axes and its id in the title."""
    n = len(entry.tokens)
    ax.imshow(entry.weights, cmap="Greys", vmin=0, vmax=max(float(entry.weights.max()), 1e-6))
    ax.set_xticks(range(n), entry.tokens, rotation=90, fontsize=max(3.5, 9 - n / 10))
    ax.set_yticks(range(n), entry.tokens, fontsize=max(3.5, 9 - n / 10))
    ax.tick_params(length=0)
    ax.set_title(f"{map_id} ({n} word pieces)", fontsize=11)


def render_sheets(
    maps: Mapping[str, LabelledMap], folder: Path, per_sheet: int = MAPS_PER_SHEET
) -> list[Path]:
    """sheet_001.png, ... with `per_sheet` maps each, in the order of `maps`."""
    ids = list(maps)
    paths = []
    for number, start in enumerate(range(0, len(ids), per_sheet), start=1):
        chunk = ids[start : start + per_sheet]
        rows = -(-len(chunk) // COLUMNS)
        fig, axes = plt.subplots(rows, COLUMNS, figsize=(6.2 * COLUMNS, 6.4 * rows), squeeze=False)
        for ax in axes.flat[len(chunk) :]:
            ax.axis("off")
        for ax, map_id in zip(axes.flat, chunk, strict=False):
            draw_map(ax, map_id, maps[map_id])
        fig.tight_layout()
        path = folder / f"sheet_{number:03d}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png", dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths
