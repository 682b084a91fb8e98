"""Attention entropy per head (Clark et al. 2019, Sec. 3.3).

Maps are smoothed as the paper does, A' = (1 - ε) A + ε / n with ε = 1e-4, so that log A'
is finite. A head's entropy for one example is the mean over queries of
-Σ_j A'[i, j] log A'[i, j] (nats); the [CLS] entropy is that of the [CLS] query's row
alone; the baseline is the entropy of uniform attention, log n. All three are averaged over
examples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SMOOTHING = 1e-4


def smooth(maps: np.ndarray, epsilon: float = SMOOTHING) -> np.ndarray:
    """(1 - ε) A + ε / n over the last axis: every entry positive, rows still sum to 1."""
    return (1.0 - epsilon) * maps + epsilon / maps.shape[-1]


def row_entropy(maps: np.ndarray) -> np.ndarray:
    """Entropy in nats of each row of smoothed maps [..., n, n] -> [..., n]."""
    smoothed = smooth(maps)
    return -(smoothed * np.log(smoothed)).sum(-1)


class HeadEntropy:
    """Running mean over examples of each head's entropy, its [CLS]-row entropy and log n."""

    def __init__(self, num_layers: int, num_heads: int) -> None:
        self.entropy = np.zeros((num_layers, num_heads))
        self.cls_entropy = np.zeros((num_layers, num_heads))
        self.uniform = 0.0
        self.examples = 0

    def add(self, maps: np.ndarray) -> None:
        """One example: maps float [L, H, n, n] with [CLS] at position 0."""
        rows = row_entropy(maps)  # [L, H, n]
        self.entropy += rows.mean(-1)
        self.cls_entropy += rows[..., 0]
        self.uniform += float(np.log(maps.shape[-1]))
        self.examples += 1

    def table(self) -> pd.DataFrame:
        """layer, head, entropy, cls_entropy, uniform (the baseline, the same on every row)."""
        count = max(self.examples, 1)
        layer, head = np.indices(self.entropy.shape).reshape(2, -1)
        return pd.DataFrame(
            {
                "layer": layer,
                "head": head,
                "entropy": self.entropy.reshape(-1) / count,
                "cls_entropy": self.cls_entropy.reshape(-1) / count,
                "uniform": self.uniform / count,
            }
        )
