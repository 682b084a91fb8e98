"""Clark et al.'s figures: the head clusters' layers numbered from 1, and the strip plots the
same bytes on every run (their jitter is seeded)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pipeline.clark import figures
from pipeline.clark.attend import TARGETS
from pipeline.core.io import save_figure

LAYERS, HEADS = 3, 4


def head_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-head targets and entropy tables as the heads analysis returns them (0-based)."""
    rng = np.random.default_rng(5)
    heads = pd.DataFrame(
        [(layer, head) for layer in range(LAYERS) for head in range(HEADS)],
        columns=["layer", "head"],
    )
    targets = pd.concat(
        [heads.assign(target=t, attention=rng.uniform(0, 1, len(heads))) for t in TARGETS],
        ignore_index=True,
    )
    entropy = heads.assign(
        entropy=rng.uniform(0, 3, len(heads)),
        cls_entropy=rng.uniform(0, 3, len(heads)),
        uniform=3.0,
    )
    return targets, entropy


def drawn_bytes(tmp_path, name: str) -> dict[str, bytes]:
    targets, entropy = head_tables()
    drawn = {
        "targets": figures.targets_per_layer(targets),
        "entropy": figures.entropy_per_layer(entropy),
    }
    for stem, figure in drawn.items():
        save_figure(tmp_path / name / f"{stem}.png", figure, stem)
    return {stem: (tmp_path / name / f"{stem}.png").read_bytes() for stem in drawn}


def test_two_renders_of_the_strip_plots_are_byte_identical(tmp_path) -> None:
    first = drawn_bytes(tmp_path, "first")
    np.random.seed(1)  # whatever NumPy's global generator holds between the renders
    second = drawn_bytes(tmp_path, "second")
    assert first == second


def test_the_seeded_jitter_leaves_numpys_global_generator_as_it_was() -> None:
    np.random.seed(7)
    expected = np.random.uniform(size=3)
    np.random.seed(7)
    plt.close(figures.targets_per_layer(head_tables()[0]))
    assert np.array_equal(np.random.uniform(size=3), expected)


def test_head_clusters_colours_layers_numbered_from_one():
    table = pd.DataFrame(
        {"layer": [0, 0, 1], "head": [0, 1, 0], "behaviour": "cls", "x": [0.0, 1, 2], "y": 0.0}
    )
    figure = figures.head_clusters(table)
    by_layer, by_behaviour = figure.axes
    legend = by_layer.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["L1", "L2"]
    assert legend.get_title().get_text() == "layer"
    key = {
        t.get_text(): h.get_markerfacecolor()
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    drawn = by_layer.collections[0].get_facecolors()[:, :3]  # one row per head, table order
    np.testing.assert_allclose(drawn, [key["L1"], key["L1"], key["L2"]])
    assert [t.get_text() for t in by_behaviour.get_legend().get_texts()] == ["cls"]
