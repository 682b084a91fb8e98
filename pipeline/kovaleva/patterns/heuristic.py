"""The heuristic labeller: one of the five classes from a map's features (see `features`).

The rule, checked in this order, with the thresholds of `patterns.heuristic` (defaults):

1. vertical+diagonal if special >= mixed (0.25), diagonal >= mixed (0.25) and
   special + diagonal >= dominant (0.5): both stripes are clearly there;
2. diagonal          if diagonal >= dominant (0.5);
3. vertical          if special >= dominant (0.5);
4. block             if the input is a sentence pair and block >= block (0.8): the mass that
   leaves [CLS]/[SEP] stays mostly in the query's own sentence (uniform attention scores 0.5).
   A broad local band (each token on its few neighbours) also passes this test; on MiniLM
   most maps labelled block are such bands, which a human annotator may relabel;
5. heterogeneous     otherwise.

Labels made this way are rule labels: they choose which maps to look at (`sample`) and are
scored as a baseline (`fit`), but never enter a label file or train the classifier.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.analyses.patterns_train.settings import PatternRule
from pipeline.kovaleva.patterns.features import map_features, special_mask


def heuristic_labels(features: pd.DataFrame, thresholds: PatternRule) -> np.ndarray:
    """The class name of each row of `features` (columns special, diagonal, block)."""
    special = features["special"].to_numpy()
    diagonal = features["diagonal"].to_numpy()
    block = features["block"].to_numpy()  # NaN for single sentences: never a block
    t = thresholds
    return np.select(
        [
            (special >= t.mixed) & (diagonal >= t.mixed) & (special + diagonal >= t.dominant),
            diagonal >= t.dominant,
            special >= t.dominant,
            np.nan_to_num(block, nan=0.0) >= t.block,
        ],
        ["vertical+diagonal", "diagonal", "vertical", "block"],
        default="heterogeneous",
    )


def rule_by_head(
    maps: np.ndarray, tokens: Sequence[str], segment_ids: np.ndarray, thresholds: PatternRule
) -> pd.DataFrame:
    """The rule's class of every head's map of one example: maps float [L, H, n, n] ->
    one row per (layer, head), layer-major, with columns layer, head (from 0), length, rule."""
    layers, heads, n, _ = maps.shape
    features = map_features(maps.reshape(layers * heads, n, n), special_mask(tokens), segment_ids)
    return pd.DataFrame(
        {
            "layer": np.repeat(np.arange(layers), heads),
            "head": np.tile(np.arange(heads), layers),
            "length": n,
            "rule": heuristic_labels(features, thresholds),
        }
    )
