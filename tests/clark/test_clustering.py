"""Head clustering: Jensen-Shannon distances, MDS and behaviour labels."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline.clark.clustering import behaviours, embed, js_divergence_sum


def test_js_distance_of_identical_and_disjoint_heads():
    n = 5
    shifted = np.roll(np.eye(n), 1, axis=1)
    maps = np.stack([np.eye(n), np.eye(n), shifted])  # [3, n, n]
    distances = js_divergence_sum(maps)
    assert distances[0, 1] == pytest.approx(0.0, abs=1e-5)
    assert distances[0, 2] == pytest.approx(n * math.log(2), rel=1e-2)  # disjoint rows
    np.testing.assert_allclose(distances, distances.T)


def test_mds_reproduces_an_embeddable_distance_matrix():
    points = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [3.0, 4.0]])
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
    embedded = embed(distances, seed=0)
    again = np.linalg.norm(embedded[:, None] - embedded[None], axis=-1)
    np.testing.assert_allclose(again, distances, atol=1e-2)


def test_behaviours_label_focused_broad_and_other_heads():
    rows = []
    attention = {0: {"previous": 0.9}, 1: {"cls": 0.6, "sep": 0.2}, 2: {}, 3: {}}
    for head, values in attention.items():
        for target in ("previous", "next", "cls", "sep", "punct"):
            rows.append(
                {"layer": 0, "head": head, "target": target, "attention": values.get(target, 0.05)}
            )
    entropy = pd.DataFrame(
        {"layer": 0, "head": [0, 1, 2, 3], "entropy": [0.1, 1.0, 2.9, 1.0], "uniform": 3.0}
    )
    labels = behaviours(pd.DataFrame(rows), entropy, focus=0.5, broad=0.8)
    assert labels["behaviour"].tolist() == ["previous", "cls", "broad", "other"]
