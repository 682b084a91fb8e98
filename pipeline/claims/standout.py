"""Whether exactly the top `count` of many units stand out, with an interval that accounts
for ranking them.

"Two of the 144 heads stand out" says that the two best heads are set apart from all the
others: the second-best head scores clearly above the third-best, the best of the rest.
The statistic is that gap, relative: (s_(2) - s_(3)) / s_(3), for s_(k) the k-th largest
score. Ranking by the observed scores favours the units whose noise happened to be high,
so every unit's 95% interval is widened to a simultaneous one (Bonferroni, as in
`selection.best_unit`). When all m simultaneous intervals hold (probability >= 95%), the
k-th largest true score lies between the k-th largest lower bound and the k-th largest
upper bound (an order statistic never falls when one value rises), whichever units those
are. So the true gap lies in [l_(2) / u_(3) - 1, u_(2) / l_(3) - 1].
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from pipeline.claims.rules import Estimate
from pipeline.claims.thresholds import CONFIDENCE, Z_CONFIDENCE


def simultaneous_bounds(
    score: np.ndarray, ci_low: np.ndarray, ci_high: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """Every unit's 95% interval [m] widened so that all m hold together with probability
    >= 95% (Bonferroni, the standard error read off each interval): (lower [m], upper [m],
    the critical z)."""
    score, ci_low, ci_high = (np.asarray(a, dtype=float) for a in (score, ci_low, ci_high))
    critical = float(norm.ppf(1 - (1 - CONFIDENCE) / (2 * len(score))))
    standard_error = (ci_high - ci_low) / (2 * Z_CONFIDENCE)  # [m]
    return score - critical * standard_error, score + critical * standard_error, critical


def kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest of `values` (k = 1: the maximum)."""
    return float(np.sort(np.asarray(values, dtype=float))[-k])


def top_set_apart(
    score: np.ndarray, ci_low: np.ndarray, ci_high: np.ndarray, count: int
) -> Estimate:
    """How far the `count`-th best unit's score lies above the next one's, relative to it:
    s_(count) / s_(count + 1) - 1, from every unit's score and 95% interval [m], with the
    ranking-aware interval of the module docstring. Scores must be positive; a lower bound
    at or below 0 leaves the upper end unbounded (inf)."""
    score = np.asarray(score, dtype=float)
    if len(score) <= count:
        raise ValueError(f"{len(score)} units: no unit is left beside the top {count}")
    lower, upper, critical = simultaneous_bounds(score, ci_low, ci_high)
    inside, next_low = kth_largest(lower, count), kth_largest(lower, count + 1)
    ratio_high = kth_largest(upper, count) / next_low if next_low > 0 else np.inf
    return Estimate(
        kth_largest(score, count) / kth_largest(score, count + 1) - 1,
        max(inside, 0.0) / kth_largest(upper, count + 1) - 1,
        ratio_high - 1,
        critical=critical,
        evidence={"units": len(score), "top": count},
    )
