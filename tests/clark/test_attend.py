"""Where heads attend: target masks and the averages over them."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.clark.attend import TargetAttention, target_masks
from tests.support.clark_inputs import (
    TOKENS,
    WORD_IDS,
)


def test_target_masks_and_averages():
    masks = target_masks(TOKENS, WORD_IDS, [".", ","])
    assert masks["sep->sep"][1] == 2 and masks["other->sep"][1] == 4
    n = len(TOKENS)
    to_cls = np.zeros((n, n))
    to_cls[:, 0] = 1.0
    to_next = np.eye(n, k=1)
    to_next[-1, -1] = 1.0  # the last token has no next one
    sep_rows = np.eye(n)  # self, except the [SEP]s attend to the other [SEP]
    sep_rows[3], sep_rows[5] = np.eye(n)[5], np.eye(n)[3]
    maps = np.stack([to_cls, to_next, sep_rows])[None]  # [1, 3, n, n]
    targets = TargetAttention(1, 3, [".", ","])
    targets.add(maps, TOKENS, WORD_IDS)
    table = targets.table().pivot_table(index="head", columns="target", values="attention")
    assert table.loc[0, "cls"] == 1.0 and table.loc[0, "sep"] == 0.0
    assert table.loc[1, "next"] == pytest.approx(5 / 6)
    assert table.loc[1, "punct"] == pytest.approx(1 / 6)  # "a" attends to "."
    assert table.loc[2, "self"] == pytest.approx(4 / 6)
    assert table.loc[2, "sep->sep"] == 1.0 and table.loc[2, "other->sep"] == 0.0
    assert table.loc[1, "other->sep"] == pytest.approx(2 / 4)  # "." -> [SEP], "b" -> [SEP]
