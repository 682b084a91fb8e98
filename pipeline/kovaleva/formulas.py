"""Kovaleva et al. (2019) attention analyses as pure functions over one example's maps.

Notation: A[l, h, i, j] is the attention that query token i gives to key token j in head h
of layer l, for one example of real length n (rows sum to 1). Each function scores every
head at once; averaging over examples, with intervals, is left to the caller
(`pipeline.kovaleva.tables`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def head_cosine(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per-head cosine similarity of two versions of the same example's maps (Fig. 5).

        cos_lh = <vec A_lh, vec B_lh> / (||vec A_lh|| ||vec B_lh||)

    with A_lh, B_lh the [n, n] maps flattened to n^2 vectors. In: [L, H, n, n] each; out [L, H].
    """
    if first.shape != second.shape:
        raise ValueError(f"map shapes differ: {first.shape} vs {second.shape}")
    a = first.reshape(*first.shape[:2], -1).astype(np.float64)  # [L, H, n*n]
    b = second.reshape(*second.shape[:2], -1).astype(np.float64)  # [L, H, n*n]
    dot = (a * b).sum(-1)  # [L, H]
    return dot / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def received_attention(maps: np.ndarray) -> np.ndarray:
    """Attention each token receives, averaged over the query positions (Fig. 6).

        r_lh[j] = (1/n) * sum_i A[l, h, i, j]

    In [L, H, n, n]; out [L, H, n].
    """
    return maps.mean(axis=-2)


def cls_attention(maps: np.ndarray, layer: int = -1) -> np.ndarray:
    """The [CLS] query's row of one layer (Fig. 7): c_h[j] = A[layer, h, 0, j].

    In [L, H, n, n]; out [1, H, n], shaped like `received_attention` of that one layer.
    """
    return maps[layer, :, 0, :][None]


def type_score(per_token: np.ndarray, is_type: np.ndarray) -> np.ndarray | None:
    """A token type's score: the maximum over the tokens of that type.

        s_lh = max_{j : type(j) = t} x_lh[j]

    `per_token` [..., n] (e.g. `received_attention`); `is_type` bool [n]. Returns [...], or
    None when the example holds no token of the type (it is then left out of the average).
    """
    if not is_type.any():
        return None
    return per_token[..., is_type].max(axis=-1)


def type_scores(per_token: np.ndarray, masks: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`type_score` for every type that occurs in the example: {type: [...]}."""
    scores = {name: type_score(per_token, mask) for name, mask in masks.items()}
    return {name: score for name, score in scores.items() if score is not None}


def frame_score(maps: np.ndarray, from_tokens: np.ndarray, to_tokens: np.ndarray) -> np.ndarray:
    """Relation-specific heads with FrameNet (Figs. 3-4): per-head max attention from the
    frame-element pieces F to the lexical-unit pieces U of one sentence.

        f_lh = max_{i in F, j in U} A[l, h, i, j]

    In [L, H, n, n], index arrays F and U; out [L, H].
    """
    block = maps[:, :, from_tokens][:, :, :, to_tokens]  # [L, H, |F|, |U|]
    return block.max(axis=(-2, -1))
