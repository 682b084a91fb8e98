"""Attention rollout (Abnar and Zuidema 2020, "Quantifying Attention Flow in Transformers").

For one example with weights A[l, h, i, j] (real length n), each layer's heads are averaged
and the residual connection is added as an identity, rows renormalised:

    Ã_l = row_normalise(0.5 * mean_h A[l, h] + 0.5 * I)        [n, n]

and the rollout to layer l multiplies the layers below it:

    R_1 = Ã_1,    R_l = Ã_l R_{l-1}                             [n, n]

R_l[i, j] is how much of token j's input embedding reaches position i at the output of layer
l, if attention alone mixed tokens. Its [CLS] row R_l[0, :] is what the classifier's token
draws from each input token.
"""

from __future__ import annotations

import numpy as np


def residual_attention(maps: np.ndarray) -> np.ndarray:
    """Ã_l for every layer: maps [L, H, n, n] -> [L, n, n], rows summing to 1."""
    mixed = 0.5 * maps.astype(np.float64).mean(axis=1) + 0.5 * np.eye(maps.shape[-1])  # [L,n,n]
    return mixed / mixed.sum(axis=-1, keepdims=True)


def rollout(maps: np.ndarray) -> np.ndarray:
    """R_l for every layer l: maps [L, H, n, n] -> [L, n, n] (layer l's entry rolls out layers
    1..l)."""
    layers = residual_attention(maps)  # [L, n, n]
    rolled = np.empty_like(layers)
    current = np.eye(maps.shape[-1])
    for layer, mixed in enumerate(layers):
        current = mixed @ current  # R_l = Ã_l R_{l-1}
        rolled[layer] = current
    return rolled


def cls_rollout(maps: np.ndarray) -> np.ndarray:
    """The [CLS] row of the rollout at every layer: maps [L, H, n, n] -> [L, n]."""
    return rollout(maps)[:, 0, :]
