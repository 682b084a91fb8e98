"""The pattern features of hand-built maps and the heuristic rule that labels them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.analyses.patterns_train.settings import PatternRule
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.heuristic import heuristic_labels
from tests.support.pattern_maps import (
    pair_tokens,
    pattern_map,
)


def test_features_of_hand_built_maps():
    tokens, segments = pair_tokens(2, 2)  # [CLS] a0 a1 [SEP] b0 b1 [SEP]: n = 7
    special = special_mask(tokens)
    n = len(tokens)
    to_sep = np.zeros((n, n))
    to_sep[:, 3] = 1.0  # every query on the first [SEP]
    to_previous = np.eye(n, k=-1)
    to_previous[0, 0] = 1.0  # [CLS] on itself
    uniform = np.full((n, n), 1 / n)
    features = map_features(np.stack([to_sep, to_previous, uniform]), special, segments)

    np.testing.assert_allclose(features["special"], [1.0, 3 / 7, 3 / 7])
    # previous token is plain for queries a1, [SEP], b1, [SEP]: 4 of 7 rows; the uniform map
    # has 8 plain neighbour cells of 1/7 over 7 rows
    np.testing.assert_allclose(features["diagonal"], [0.0, 4 / 7, 8 / 49], atol=1e-12)
    # plain queries of the uniform map keep 2 of their 4 plain keys in their own sentence
    assert features["block"][2] == pytest.approx(0.5)
    np.testing.assert_allclose(features["entropy"], [0.0, 0.0, 1.0], atol=1e-12)

    single = map_features(uniform[None, :4, :4] * 7 / 4, special[:4], np.zeros(4, int))
    assert np.isnan(single["block"][0])  # one sentence: no block feature


def test_heuristic_labels_each_clean_class():
    rng = np.random.default_rng(0)
    tokens, segments = pair_tokens(6, 5)
    kinds = ["vertical", "diagonal", "vertical+diagonal", "block"]
    maps = np.stack([pattern_map(k, tokens, segments, 0.05, rng) for k in kinds])
    maps = np.concatenate([maps, np.full((1, 14, 14), 1 / 14)])  # uniform: heterogeneous
    features = map_features(maps, special_mask(tokens), segments)
    labels = heuristic_labels(features, PatternRule(mixed=0.25, dominant=0.5, block=0.8))
    assert list(labels) == [*kinds, "heterogeneous"]


def test_heuristic_thresholds_decide_borderline_maps():
    features = pd.DataFrame(
        {
            "special": [0.49, 0.51, 0.25, 0.1, 0.3],
            "diagonal": [0.1, 0.1, 0.2, 0.1, 0.2],
            "block": [np.nan, np.nan, 0.9, 0.79, 0.5],
            "entropy": [0.5] * 5,
        }
    )
    labels = heuristic_labels(features, PatternRule(mixed=0.2, dominant=0.5, block=0.8))
    assert list(labels) == [
        "heterogeneous",  # vertical mass just under `dominant`
        "vertical",
        "block",
        "heterogeneous",  # own-sentence share just under `block`
        "vertical+diagonal",  # both >= mixed, together >= dominant
    ]


def test_block_feature_is_balanced_over_sentences():
    tokens, segments = pair_tokens(6, 1)  # a long and a one-token sentence
    n = len(tokens)
    uniform = np.full((1, n, n), 1 / n)
    within = (segments[:, None] == segments[None, :]) & ~special_mask(tokens)[None, :]
    within = (within / within.sum(-1, keepdims=True))[None]
    features = map_features(np.concatenate([uniform, within]), special_mask(tokens), segments)
    np.testing.assert_allclose(features["block"], [0.5, 1.0])
