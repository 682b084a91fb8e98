"""The entropy of attention rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.clark.entropy import HeadEntropy, row_entropy


def test_entropy_of_uniform_and_one_hot_heads():
    n = 8
    maps = np.stack([np.full((n, n), 1.0 / n), np.eye(n)])[None]  # [1, 2, n, n]
    rows = row_entropy(maps)
    assert rows[0, 0] == pytest.approx(np.full(n, math.log(n)))
    assert rows[0, 1].max() < 0.01  # smoothing keeps one-hot rows near 0 nats
    entropy = HeadEntropy(1, 2)
    entropy.add(maps)
    entropy.add(maps[..., :4, :4] * 2)  # a second example of length 4 (rows re-normalised)
    table = entropy.table()
    assert table["uniform"].iloc[0] == pytest.approx((math.log(8) + math.log(4)) / 2)
    assert table.loc[0, "cls_entropy"] == pytest.approx(table["uniform"].iloc[0], rel=1e-6)
