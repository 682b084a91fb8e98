"""Seeded random subsets: the same seed always picks the same items.

- `seeded_subset`: a plain random subset of indices;
- `stratified_subset`: a random subset that keeps the share of every stratum (e.g. label);
- `evaluation_sample`: the rows of a GLUE split a stage evaluates: stratified by label for a
  classification task, by score quintile for a regression task (STS-B), never the first N
  rows (STS-B's first dev rows come from one easy genre).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.schema import TaskConfig

SCORE_BINS = 5  # strata of a regression task: quantile bins of the gold score


def seeded_subset(total: int, size: int | None, seed: int) -> np.ndarray:
    """Sorted indices of `size` of `total` items drawn without replacement (all if `size` is
    None or not smaller than `total`)."""
    if size is None or size >= total:
        return np.arange(total)
    return np.sort(np.random.default_rng(seed).choice(total, size=size, replace=False))


def stratified_subset(strata: np.ndarray, size: int | None, seed: int) -> np.ndarray:
    """Sorted indices of `size` items drawn without replacement so that each stratum (the
    distinct values of `strata` [N]) gets its share of `size`, rounded by largest remainder
    (so the sizes add up to `size`); all items if `size` is None or not below N."""
    strata = np.asarray(strata)
    if size is None or size >= len(strata):
        return np.arange(len(strata))
    _, inverse, counts = np.unique(strata, return_inverse=True, return_counts=True)
    exact = counts * size / len(strata)  # [S] ideal stratum sizes
    sizes = np.floor(exact).astype(int)
    remainders = np.argsort(-(exact - sizes), kind="stable")
    sizes[remainders[: size - sizes.sum()]] += 1
    rng = np.random.default_rng(seed)
    chosen = [
        rng.choice(np.flatnonzero(inverse == stratum), size=taken, replace=False)
        for stratum, taken in enumerate(sizes)
    ]
    return np.sort(np.concatenate(chosen))


def label_strata(task: TaskConfig, labels: np.ndarray) -> np.ndarray:
    """The stratum of each row: its class, or the quantile bin of its score (regression)."""
    if not task.is_regression:
        return np.asarray(labels)
    edges = np.quantile(labels, np.linspace(0, 1, SCORE_BINS + 1)[1:-1])
    return np.searchsorted(edges, labels, side="right")


def evaluation_sample(
    frame: pd.DataFrame, task: TaskConfig, size: int | None, seed: int
) -> pd.DataFrame:
    """`size` rows of a split (with its `label` column), drawn by `stratified_subset` over
    `label_strata`, in their original order; the frame's `idx` column names them."""
    labels = frame["label"].to_numpy()
    chosen = stratified_subset(label_strata(task, labels), size, seed)
    return frame.iloc[chosen].reset_index(drop=True)
