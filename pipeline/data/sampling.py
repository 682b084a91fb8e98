"""Seeded random subsets: the same seed always picks the same items."""

from __future__ import annotations

import numpy as np


def seeded_subset(total: int, size: int | None, seed: int) -> np.ndarray:
    """Sorted indices of `size` of `total` items drawn without replacement (all if `size` is
    None or not smaller than `total`)."""
    if size is None or size >= total:
        return np.arange(total)
    return np.sort(np.random.default_rng(seed).choice(total, size=size, replace=False))
