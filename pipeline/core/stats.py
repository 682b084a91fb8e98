"""Uncertainty of the pipeline's numbers, on scipy.stats: bootstrap intervals, paired tests
and false-discovery control. Every function is seeded; nothing here is hand-rolled where
scipy has it.

- `bootstrap_interval`: a percentile bootstrap interval of any statistic of one or several
  per-example arrays, resampled together (paired) or each on its own, scalar or
  vector-valued, numbers or labels (scipy.stats.bootstrap);
- `paired_difference_interval`: the same for the difference of a metric under two
  conditions on the same examples;
- `paired_test`: a sign-flip permutation test of per-example differences (mean 0?);
- `paired_metric_test`: a permutation test of a metric's difference between two conditions
  on the same examples, swapping the two conditions' outputs within each example
  (scipy.stats.permutation_test, permutation_type="samples"); for accuracy or a mean loss it
  is the sign-flip test, and it also serves F1, MCC, Pearson and Spearman, which are no
  per-example means;
- `binomial_interval`: the Clopper-Pearson interval of a proportion (scipy.stats.binomtest);
- `benjamini_hochberg`: q-values controlling the false discovery rate over many tests.

Why permutation rather than Wilcoxon: the permutation test needs no symmetry of the
differences, handles the many ties of 0/1 correctness changes, and the same call tests any
metric's difference.

A *vectorized* statistic (`vectorized=True`) takes arrays with extra leading (batch) axes:
a sample of shape [N] (or [N, K]) arrives as [..., N] (or [..., N, K]) and the statistic
returns one value (or [K] values) per batch entry, [...] (or [..., K]). Vectorized
statistics make thousands of resamples cheap (pipeline/models/batched_metrics.py holds the
GLUE metrics in that form).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

Sample = Sequence | np.ndarray


@dataclass(frozen=True)
class Interval:
    """A statistic on the full data and its confidence interval."""

    estimate: float
    low: float
    high: float

    def as_dict(self, name: str) -> dict[str, float]:
        """{name, name_ci_low, name_ci_high} for tables and flat metrics files."""
        return {name: self.estimate, f"{name}_ci_low": self.low, f"{name}_ci_high": self.high}

    def excludes(self, value: float = 0.0) -> bool:
        """True when `value` lies outside [low, high]."""
        return not self.low <= value <= self.high


def bootstrap_interval(
    statistic: Callable[..., float | np.ndarray],
    *samples: Sample,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    paired: bool = True,
    vectorized: bool = False,
) -> Interval | list[Interval]:
    """Percentile bootstrap interval of `statistic(*samples)`; its estimate is the statistic
    on the full data.

    paired=True resamples the rows (axis 0) of all samples together (they need one length),
    so values of one example stay together; paired=False resamples each sample on its own
    (independent groups). A statistic returning a vector [K] gives a list of K Intervals,
    one per component. Resamples on which the statistic is undefined (NaN) are left out of
    the percentiles. Rows are resampled as indices through scipy.stats.bootstrap, so labels
    of any type work. See the module docstring for `vectorized`.
    """
    arrays = [np.asarray(s) for s in samples]
    if paired and any(len(a) != len(arrays[0]) for a in arrays):
        raise ValueError("bootstrap_interval: paired samples need the same number of rows")
    full = np.asarray(statistic(*arrays), dtype=float)
    estimate = np.atleast_1d(full)

    def on_indices(*indices: np.ndarray, axis: int = -1) -> np.ndarray:
        chosen = indices * len(arrays) if paired else indices
        picked = (a[i.astype(int)] for a, i in zip(arrays, chosen, strict=True))
        values = np.asarray(statistic(*picked), dtype=float)  # [...] or [..., K]
        return np.moveaxis(values, -1, 0) if vectorized and full.ndim else values  # [K, ...]

    indices = (np.arange(len(arrays[0])),) if paired else tuple(np.arange(len(a)) for a in arrays)
    with warnings.catch_warnings():
        # scipy's own interval goes unused (the percentiles below leave NaN resamples out),
        # so its warning that the interval is NaN on such a distribution says nothing here
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            indices,
            on_indices,
            n_resamples=n_resamples,
            vectorized=vectorized,
            paired=False,  # a single index array when paired: the pairing is in `on_indices`
            method="percentile",
            confidence_level=confidence,
            rng=np.random.default_rng(seed),
        )
    distribution = np.asarray(result.bootstrap_distribution, dtype=float)
    distribution = distribution.reshape(len(estimate), -1)  # [K, n_resamples]
    tail = (1 - confidence) / 2 * 100
    intervals = []
    for value, draws in zip(estimate, distribution, strict=True):
        finite = draws[np.isfinite(draws)]
        low, high = np.percentile(finite, [tail, 100 - tail]) if len(finite) else (np.nan, np.nan)
        intervals.append(Interval(float(value), float(low), float(high)))
    return intervals[0] if full.ndim == 0 else intervals


def paired_difference_interval(
    metric: Callable[[np.ndarray, np.ndarray], float | np.ndarray],
    truth: Sample,
    first: Sample,
    second: Sample,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    vectorized: bool = False,
) -> Interval:
    """Interval of metric(truth, second) - metric(truth, first) over the same examples
    (e.g. first = baseline predictions, second = predictions with a head disabled)."""
    return bootstrap_interval(
        lambda t, a, b: np.asarray(metric(t, b)) - np.asarray(metric(t, a)),
        truth,
        first,
        second,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        vectorized=vectorized,
    )


def paired_test(differences: Sample, *, n_resamples: int = 9999, seed: int = 0) -> float:
    """Two-sided p-value that per-example differences are centred on 0 (random sign flips of
    each difference; exact when 2^N <= n_resamples). All-zero differences give 1."""
    differences = np.asarray(differences, dtype=float)
    if not np.any(differences):
        return 1.0
    result = stats.permutation_test(
        (differences,),
        lambda d, axis=-1: np.mean(d, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def paired_metric_test(
    metric: Callable[[np.ndarray, np.ndarray], float | np.ndarray],
    truth: Sample,
    first: Sample,
    second: Sample,
    *,
    n_resamples: int = 9999,
    seed: int = 0,
    vectorized: bool = False,
) -> float:
    """Two-sided p-value of metric(truth, second) - metric(truth, first) under the null that
    the two conditions are exchangeable within each example (their outputs are swapped at
    random per example). Identical outputs give 1."""
    truth, first, second = (np.asarray(x) for x in (truth, first, second))
    if np.array_equal(first, second):
        return 1.0

    def difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(metric(truth, b)) - np.asarray(metric(truth, a))

    result = stats.permutation_test(
        (first, second),
        difference,
        permutation_type="samples",
        vectorized=vectorized,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def binomial_interval(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """The proportion successes / trials and its exact (Clopper-Pearson) interval; NaN for
    no trials."""
    if trials == 0:
        return Interval(np.nan, np.nan, np.nan)
    found = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence, "exact")
    return Interval(successes / trials, float(found.low), float(found.high))


def benjamini_hochberg(p_values: Sample) -> np.ndarray:
    """Benjamini-Hochberg q-values (adjusted p-values) of a family of tests."""
    p_values = np.asarray(p_values, dtype=float)
    if p_values.size == 0:
        return p_values
    return stats.false_discovery_control(p_values, method="bh")
