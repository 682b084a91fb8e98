"""Seeded, stratified evaluation samples (pipeline/data/sampling.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.schema import load_task
from pipeline.data.sampling import (
    SCORE_BINS,
    evaluation_sample,
    label_strata,
    seeded_subset,
    stratified_subset,
)


def test_stratified_subset_is_reproducible_and_changes_with_the_seed():
    strata = np.repeat([0, 1, 2], [50, 30, 20])
    first = stratified_subset(strata, 40, seed=3)
    assert first.tolist() == stratified_subset(strata, 40, seed=3).tolist()
    assert first.tolist() != stratified_subset(strata, 40, seed=4).tolist()
    assert first.tolist() == sorted(set(first.tolist()))  # sorted, no repeats


def test_stratified_subset_keeps_every_stratum_share():
    strata = np.repeat([0, 1, 2], [50, 30, 20])
    np.random.default_rng(0).shuffle(strata)
    for seed in range(5):
        chosen = stratified_subset(strata, 40, seed)
        counts = np.bincount(strata[chosen], minlength=3)
        assert counts.tolist() == [20, 12, 8]  # 40 x (0.5, 0.3, 0.2), exactly


def test_stratified_subset_rounds_by_largest_remainder():
    strata = np.repeat(["a", "b", "c"], [5, 3, 2])  # shares 0.5, 0.3, 0.2 of 10
    chosen = stratified_subset(strata, 3, seed=0)  # ideal 1.5, 0.9, 0.6 -> 1, 1, 1
    assert sorted(strata[chosen].tolist()) == ["a", "b", "c"]
    assert len(stratified_subset(strata, 7, seed=0)) == 7


def test_everything_when_the_size_is_none_or_too_large():
    assert stratified_subset(np.array([1, 0, 1]), None, 0).tolist() == [0, 1, 2]
    assert stratified_subset(np.array([1, 0, 1]), 5, 0).tolist() == [0, 1, 2]
    assert seeded_subset(3, None, 0).tolist() == [0, 1, 2]


def test_regression_scores_are_stratified_by_quantile_bins():
    scores = np.linspace(0.0, 5.0, 100)
    strata = label_strata(load_task("stsb"), scores)
    assert np.bincount(strata).tolist() == [100 // SCORE_BINS] * SCORE_BINS
    labels = np.array([2, 0, 1])
    assert label_strata(load_task("rte"), labels).tolist() == [2, 0, 1]


def test_tied_scores_on_a_bin_edge_go_to_the_upper_bin():
    """STS-B's scores sit on a 0.2 grid: 0.0, 0.2, ..., 5.0, four rows each (104 rows). The
    quintile edges fall on grid values (positions 103 q: 20.6, 41.2, 61.8, 82.4, all between
    rows of one score): 1.0, 2.0, 3.0, 4.0. A score on an edge opens the next bin, [e, e'),
    so the bins hold 5, 5, 5, 5 and 6 scores: 20, 20, 20, 20 and 24 rows (closing bins at
    their edge instead, (e, e'], would give 24, 20, 20, 20, 20)."""
    scores = np.repeat(np.round(np.arange(0.0, 5.01, 0.2), 1), 4)  # [104]
    strata = label_strata(load_task("stsb"), scores)
    assert np.bincount(strata).tolist() == [20, 20, 20, 20, 24]
    assert strata[scores == 1.0].tolist() == [1] * 4


@pytest.mark.parametrize("name", ["rte", "stsb"])
def test_evaluation_sample_is_no_head_of_the_split(name):
    """An easy first block (a genre) would be picked whole by `head`: the sample spreads."""
    task = load_task(name)
    rng = np.random.default_rng(0)
    labels = rng.normal(2.5, 1.0, 200) if task.is_regression else rng.integers(0, 2, 200)
    frame = pd.DataFrame({"idx": np.arange(200), "label": labels})
    sample = evaluation_sample(frame, task, 40, seed=1)
    assert len(sample) == 40
    assert sample["idx"].is_monotonic_increasing
    assert sample["idx"].max() >= 100  # drawn from the whole split
    assert sample["idx"].tolist() == evaluation_sample(frame, task, 40, seed=1)["idx"].tolist()
    if not task.is_regression:
        shares = frame["label"].value_counts(normalize=True)
        drawn = sample["label"].value_counts(normalize=True)
        assert (drawn - shares).abs().max() <= 1 / 40  # within one example's rounding
