r"""Scalar features of attention maps: where the attention mass of the queries goes.

A map is `A [n, n]` (rows: queries, columns: keys; each row sums to 1) over the n real tokens
of one example. With S the [CLS]/[SEP] positions:

- special  = mean_i sum_{j in S} A[i, j]                       (vertical pattern)
- diagonal = mean_i sum_{j in {i-1, i+1}, j not in S} A[i, j]  (previous/next token; a
             neighbouring [CLS]/[SEP] counts as vertical only, so the two masses are disjoint)
- block    = mean_s mean_{i in s \ S} [sum_{j in s \ S} A[i, j] / sum_{j not in S} A[i, j]]
             over the two sentences s: the share of the non-special mass that stays in the
             query's own sentence, averaged per sentence and then over both, so that uniform
             attention scores 0.5 whatever the sentences' lengths and pure within-sentence
             attention 1 (NaN for a single-sentence input: there is no second sentence)
- entropy  = mean_i H(A[i, :]) / log n                         (0: one key per query, 1: uniform)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.kovaleva.patterns.roles import special_positions

FEATURES = ("special", "diagonal", "block", "entropy")


def special_mask(tokens: Sequence[str]) -> np.ndarray:
    """Which positions hold [CLS] or [SEP] (or the tokenizer's own, e.g. <s>, </s>): bool [n]."""
    is_cls, is_sep = special_positions(tokens)
    return is_cls | is_sep


def map_features(maps: np.ndarray, special: np.ndarray, segment_ids: np.ndarray) -> pd.DataFrame:
    """The four features of each map of one example, one row per map.

    maps: float [k, n, n] (k maps of the same example); special: bool [n]; segment_ids: int [n].
    """
    maps = np.asarray(maps, dtype=np.float64)
    n = maps.shape[-1]
    special_mass = maps[:, :, special].sum(-1).mean(-1)  # [k]

    neighbours = np.eye(n, k=1, dtype=bool) | np.eye(n, k=-1, dtype=bool)  # [n, n]
    neighbours &= ~special[None, :]
    diagonal = (maps * neighbours).sum(-1).mean(-1)  # [k]

    plain = ~special
    sentences = np.unique(segment_ids[plain])
    if len(sentences) > 1:
        same = segment_ids[:, None] == segment_ids[None, :]  # [n, n]
        rows = maps[:, plain][:, :, plain]  # [k, m, m]: plain queries x plain keys
        inside = (rows * same[plain][:, plain]).sum(-1)  # [k, m]
        share = inside / np.maximum(rows.sum(-1), 1e-12)  # [k, m]
        per_sentence = [share[:, segment_ids[plain] == s].mean(-1) for s in sentences]
        block = np.mean(per_sentence, axis=0)  # [k]
    else:
        block = np.full(len(maps), np.nan)

    logs = np.log(np.where(maps > 0, maps, 1.0))
    entropy = -(maps * logs).sum(-1).mean(-1) / np.log(max(n, 2))  # [k]
    return pd.DataFrame(
        {"special": special_mass, "diagonal": diagonal, "block": block, "entropy": entropy}
    )
