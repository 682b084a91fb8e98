"""One estimate from the estimates of independent strata: each task's dev examples are drawn
on their own, so a statistic measured per task and pooled over the tasks is a stratified
mean.

With stratum estimates m_t, their standard errors s_t (read off each 95% interval's width)
and weights w_t = n_t / sum(n) (the stratum's examples), the pooled estimate is
sum(w_t m_t), its standard error sqrt(sum(w_t^2 s_t^2)), and its interval the estimate
+-1.96 of those. The strata are independent (no example is in two), so no covariance term
enters; reading a standard error off an interval assumes the interval is about symmetric,
which a percentile bootstrap of a mean over tens of examples is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pipeline.claims.rules import Estimate
from pipeline.claims.thresholds import Z_CONFIDENCE


def stratified(parts: Sequence[tuple[Estimate, float]]) -> Estimate:
    """The weighted mean of `parts` (each stratum's estimate and its examples) with its 95%
    interval (module docstring); its evidence `rows` is the examples over all strata."""
    total = sum(n for _, n in parts)
    if not parts or total <= 0:
        raise ValueError("stratified: no stratum with examples")
    weights = [n / total for _, n in parts]
    statistic = sum(w * m.statistic for w, (m, _) in zip(weights, parts, strict=True))
    variance = sum(
        (w * (m.ci_high - m.ci_low) / (2 * m.critical)) ** 2
        for w, (m, _) in zip(weights, parts, strict=True)
    )
    half = Z_CONFIDENCE * math.sqrt(variance)
    return Estimate(statistic, statistic - half, statistic + half, evidence={"rows": total})
