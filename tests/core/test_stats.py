"""The statistics module (pipeline/core/stats.py) and the batched GLUE metrics, on known answers
and simulated data."""

from __future__ import annotations

import warnings
from dataclasses import astuple

import numpy as np
import pytest
from scipy.stats import binom

from pipeline.core.stats import (
    Interval,
    benjamini_hochberg,
    binomial_interval,
    bootstrap_interval,
    paired_difference_interval,
    paired_metric_test,
    paired_test,
)
from pipeline.models import batched_metrics, metrics

SIMULATIONS = 200


def coverage_tolerance(simulations: int, level: float = 0.95) -> tuple[int, int]:
    """The counts of covering intervals a correct level-`level` method gives with 99.9%
    probability (binomial), widened by 2 points for the percentile bootstrap's known
    small-sample undercoverage."""
    low, high = binom.interval(0.999, simulations, level)
    return int(low) - int(0.02 * simulations), int(high)


def test_bootstrap_interval_of_a_mean_covers_at_its_nominal_level():
    rng = np.random.default_rng(0)
    covered = 0
    for simulation in range(SIMULATIONS):
        sample = rng.exponential(1.0, size=60)  # skewed, true mean 1
        found = bootstrap_interval(
            lambda x: x.mean(axis=-1), sample, n_resamples=400, seed=simulation, vectorized=True
        )
        covered += found.low <= 1.0 <= found.high
    low, high = coverage_tolerance(SIMULATIONS)
    assert low <= covered <= high


def test_paired_difference_interval_of_accuracy_covers_the_true_difference():
    """Two classifiers right with probability 0.8 and 0.7 on each example: the true
    accuracy difference is 0.1; paired resampling keeps each example's two answers."""
    rng = np.random.default_rng(1)
    covered = 0
    for simulation in range(SIMULATIONS):
        truth = rng.integers(0, 2, size=150)
        first = np.where(rng.random(150) < 0.7, truth, 1 - truth)
        second = np.where(rng.random(150) < 0.8, truth, 1 - truth)
        found = paired_difference_interval(
            batched_metrics.accuracy,
            truth,
            first,
            second,
            n_resamples=400,
            seed=simulation,
            vectorized=True,
        )
        covered += found.low <= 0.1 <= found.high
    low, high = coverage_tolerance(SIMULATIONS)
    assert low <= covered <= high


def test_vectorized_and_plain_statistics_give_the_same_interval():
    rng = np.random.default_rng(2)
    truth, scores = rng.normal(size=40), rng.normal(size=40)
    plain = bootstrap_interval(metrics.pearson, truth, scores, n_resamples=300, seed=3)
    fast = bootstrap_interval(
        batched_metrics.pearson, truth, scores, n_resamples=300, seed=3, vectorized=True
    )
    assert astuple(fast) == pytest.approx(astuple(plain))
    assert plain.estimate == pytest.approx(metrics.pearson(truth, scores))


def test_vector_statistic_gives_one_interval_per_component():
    shares = np.eye(3)[[0, 0, 1, 2, 0, 1]]  # [6 examples, 3 classes], one-hot
    plain = bootstrap_interval(lambda s: s.mean(axis=0), shares, n_resamples=200, seed=0)
    fast = bootstrap_interval(
        lambda s: s.mean(axis=-2), shares, n_resamples=200, seed=0, vectorized=True
    )
    assert [i.estimate for i in plain] == pytest.approx([0.5, 2 / 6, 1 / 6])
    np.testing.assert_allclose([astuple(i) for i in fast], [astuple(i) for i in plain])
    assert all(0.0 <= i.low <= i.estimate <= i.high <= 1.0 for i in plain)


def test_unpaired_bootstrap_takes_groups_of_different_sizes():
    rng = np.random.default_rng(4)
    first, second = rng.normal(0, 1, 80), rng.normal(1, 1, 50)
    found = bootstrap_interval(
        lambda a, b: b.mean() - a.mean(), first, second, paired=False, seed=0
    )
    assert found.low < second.mean() - first.mean() < found.high
    assert found.low > 0.4  # a difference of 1 with ~0.18 standard error
    with pytest.raises(ValueError, match="same number of rows"):
        bootstrap_interval(lambda a, b: 0.0, first, second)


def test_resamples_where_the_statistic_is_undefined_are_left_out_without_a_warning():
    """A statistic undefined on some resamples (here: those that draw no 1) leaves them out
    of the percentiles, quietly (scipy's own interval, unused, would warn each time)."""
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])

    def share_of_ones(values: np.ndarray) -> float:
        return float(values.mean()) if values.max() > 0 else np.nan

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = bootstrap_interval(share_of_ones, x, seed=0)
    assert found.estimate == pytest.approx(1 / 6) and 0 < found.low < found.high <= 1


def test_interval_flattens_for_metrics_files():
    found = Interval(0.5, 0.4, 0.6)
    assert found.as_dict("accuracy") == {
        "accuracy": 0.5,
        "accuracy_ci_low": 0.4,
        "accuracy_ci_high": 0.6,
    }
    assert found.excludes(0.0) and not found.excludes(0.45)


def test_paired_test_known_case():
    """Six positive differences and nothing else: exact two-sided p = 2 / 2^6."""
    assert paired_test([1.0] * 6) == pytest.approx(2 / 64)
    assert paired_test([1.0, -1.0] * 3) == 1.0
    assert paired_test([0.0] * 5) == 1.0
    shifted = np.random.default_rng(5).normal(1.0, 1.0, size=40)
    # the floor of a two-sided Monte Carlo p-value: twice (0 + 1) / (999 + 1)
    assert paired_test(shifted, n_resamples=999) == pytest.approx(2 / 1000)


def test_paired_metric_test_of_accuracy_is_the_sign_flip_test_of_correctness():
    rng = np.random.default_rng(6)
    truth = rng.integers(0, 2, size=9)
    first, second = rng.integers(0, 2, size=9), rng.integers(0, 2, size=9)
    on_metric = paired_metric_test(batched_metrics.accuracy, truth, first, second, vectorized=True)
    on_differences = paired_test((second == truth).astype(float) - (first == truth))
    assert on_metric == pytest.approx(on_differences)
    assert paired_metric_test(metrics.accuracy, truth, first, first) == 1.0


@pytest.mark.parametrize("name", ["f1", "mcc", "pearson", "spearman"])
def test_paired_metric_test_tells_a_real_difference_from_none(name):
    rng = np.random.default_rng(7)
    regression = name in ("pearson", "spearman")
    if regression:
        truth = rng.normal(size=80)
        good, bad = truth + rng.normal(0, 0.3, 80), truth + rng.normal(0, 2.0, 80)
        same = truth + rng.normal(0, 0.3, 80)
    else:
        truth = rng.integers(0, 2, size=80)
        good = np.where(rng.random(80) < 0.9, truth, 1 - truth)
        bad = np.where(rng.random(80) < 0.55, truth, 1 - truth)
        same = np.where(rng.random(80) < 0.9, truth, 1 - truth)
    metric = batched_metrics.BATCHED[name]
    found = paired_metric_test(metric, truth, bad, good, n_resamples=999, vectorized=True)
    assert found < 0.01
    assert paired_metric_test(metric, truth, good, same, n_resamples=999, vectorized=True) > 0.05


def test_benjamini_hochberg_matches_the_textbook_procedure():
    """q_(i) = min over j >= i of p_(j) m / j, computed by hand for eight p-values."""
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.2, 0.04, 0.9])
    # sorted: 0.005 0.01 0.03 0.04 0.04 0.2 0.5 0.9 -> p m / rank:
    # 0.04 0.04 0.08 0.08 0.064 0.2667 0.5714 0.9 -> running minimum from the top:
    by_rank = [0.04, 0.04, 0.064, 0.064, 0.064, 0.8 / 3, 4 / 7, 0.9]
    expected = np.empty(8)
    expected[np.argsort(p, kind="stable")] = by_rank
    np.testing.assert_allclose(benjamini_hochberg(p), expected)
    assert (benjamini_hochberg(p) < 0.05).sum() == 2
    assert benjamini_hochberg([]).size == 0


def test_binomial_interval_is_clopper_pearson():
    found = binomial_interval(7, 10)
    assert found.estimate == 0.7
    # Clopper-Pearson bounds of 7/10 (beta quantiles), as tabulated
    assert found.low == pytest.approx(0.3475, abs=1e-4)
    assert found.high == pytest.approx(0.9333, abs=1e-4)
    assert np.isnan(binomial_interval(0, 0).estimate)


@pytest.mark.parametrize("name", ["accuracy", "f1", "mcc"])
def test_batched_classification_metrics_equal_sklearns(name):
    rng = np.random.default_rng(8)
    for trial in range(30):
        classes = 2 if name == "f1" else int(rng.integers(2, 4))
        size = int(rng.integers(2, 25))
        truth, said = rng.integers(0, classes, size), rng.integers(0, classes, size)
        if trial % 5 == 0:
            said[:] = 0  # a constant prediction: sklearn's zero-division cases
        expected = metrics.METRICS[name](truth, said)
        assert batched_metrics.BATCHED[name](truth, said) == pytest.approx(expected)
    truths, saids = rng.integers(0, 2, (4, 12)), rng.integers(0, 2, (4, 12))
    np.testing.assert_allclose(
        batched_metrics.BATCHED[name](truths, saids),
        [metrics.METRICS[name](t, s) for t, s in zip(truths, saids, strict=True)],
    )


@pytest.mark.parametrize("name", ["pearson", "spearman"])
def test_batched_correlations_equal_scipys(name):
    rng = np.random.default_rng(9)
    for trial in range(30):
        truth = rng.normal(size=15)
        scores = np.round(rng.normal(size=15), 1)  # ties for Spearman's mean ranks
        if trial % 6 == 0:
            scores[:] = 2.0  # constant: correlation 0, as metrics.py
        expected = metrics.METRICS[name](truth, scores)
        assert batched_metrics.BATCHED[name](truth, scores) == pytest.approx(expected)
