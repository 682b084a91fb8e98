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


def test_each_layers_attention_to_sep_is_averaged_over_examples_with_an_interval():
    n = len(TOKENS)  # [CLS] a . [SEP] b [SEP]
    to_sep, to_cls = np.zeros((n, n)), np.zeros((n, n))
    to_sep[:, [3, 5]] = 0.5  # every query splits its attention between the two [SEP]s
    to_cls[:, 0] = 1.0
    targets = TargetAttention(2, 2, [".", ","])
    # layer 1: both heads to [SEP] in the first example, one head in the second; layer 2: none
    targets.add(
        np.stack([np.stack([to_sep, to_sep]), np.stack([to_cls, to_cls])]), TOKENS, WORD_IDS
    )
    targets.add(
        np.stack([np.stack([to_sep, to_cls]), np.stack([to_cls, to_cls])]), TOKENS, WORD_IDS
    )
    # an input without a [SEP] (every word id set) adds nothing to the [SEP] averages
    targets.add(np.zeros((2, 2, n, n)), TOKENS, [0] * n)
    layer_one, layer_two = targets.by_layer("sep", resamples=200, seed=0)
    assert layer_one.estimate == pytest.approx(0.75)  # (1 + 0.5) / 2
    assert 0.5 <= layer_one.low < 0.75 < layer_one.high <= 1.0
    assert (layer_two.estimate, layer_two.low, layer_two.high) == (0.0, 0.0, 0.0)


def test_the_middle_layers_mean_reads_layers_three_to_five_of_six_and_sinks_add_up():
    n = len(TOKENS)  # [CLS] a . [SEP] b [SEP]
    to_sep, to_cls, to_a = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    to_sep[:, [3, 5]] = 0.5
    to_cls[:, 0] = 1.0
    to_a[:, 1] = 1.0  # a plain word: no sink
    # six layers of one head: layers 1, 2 and 6 to [SEP]; 3 to [CLS]; 4 to a word; 5 to [SEP]
    maps = np.stack([to_sep, to_sep, to_cls, to_a, to_sep, to_sep])[:, None]  # [6, 1, n, n]
    targets = TargetAttention(6, 1, [".", ","])
    targets.add(maps, TOKENS, WORD_IDS)
    targets.add(maps, TOKENS, WORD_IDS)
    sep = targets.middle_mean("sep", resamples=50, seed=0)
    sink = targets.middle_mean("sink", resamples=50, seed=0)
    assert sep.estimate == pytest.approx(1 / 3)  # layers 3-5: 0, 0, 1
    assert sink.estimate == pytest.approx(2 / 3)  # [CLS] counts as a sink, the word does not
    sink_layers = targets.by_layer("sink", resamples=50, seed=0)
    assert [i.estimate for i in sink_layers] == pytest.approx([1, 1, 1, 0, 1, 1])
