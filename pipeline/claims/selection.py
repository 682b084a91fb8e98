"""The best of many units (heads, layers) with an interval that accounts for choosing it.

Choosing the largest of m estimates and quoting its own 95% interval overstates it: among
72 heads with no effect, the best one's interval excludes 0 most of the time. Here every
unit's interval is widened to a simultaneous one (Bonferroni: z at 1 - 0.05 / 2m standard
errors, the standard error read off the unit's 95% interval). When all m simultaneous
intervals hold, which happens with probability >= 95%, the largest true effect lies between
the largest lower bound and the largest upper bound; so [max lower, max upper] is a 95%
interval for the best unit's true effect, whichever unit that is.
tests/claims/test_statistics.py checks its coverage by simulation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from pipeline.claims.rules import Estimate
from pipeline.claims.thresholds import CONFIDENCE, Z_CONFIDENCE
from pipeline.claims.unchanged import unchanged_note, widen_unchanged


def best_unit(delta: np.ndarray, ci_low: np.ndarray, ci_high: np.ndarray) -> Estimate:
    """The largest of `delta` [m] with a simultaneous interval from each unit's 95% interval
    [m]; `critical` is the Bonferroni z, so `detectable` is the best unit's detectable
    effect after the choice."""
    delta, ci_low, ci_high = (np.asarray(a, dtype=float) for a in (delta, ci_low, ci_high))
    critical = float(norm.ppf(1 - (1 - CONFIDENCE) / (2 * len(delta))))
    standard_error = (ci_high - ci_low) / (2 * Z_CONFIDENCE)  # [m]
    return Estimate(
        float(delta.max()),
        float((delta - critical * standard_error).max()),
        float((delta + critical * standard_error).max()),
        critical=critical,
        evidence={"units": len(delta)},
    )


def best_removal(table: pd.DataFrame, rows: float, units: str = "heads") -> Estimate:
    """The best removal of an ablation table (columns delta, ci_low, ci_high, q_value) scored
    on `rows` dev rows, with the count of units whose gain is significant (q < 0.05,
    Benjamini-Hochberg) as evidence. A unit that changed no prediction gets the interval of
    `unchanged.widen_unchanged` in place of [0, 0]."""
    widened, unchanged = widen_unchanged(table, rows)
    best = best_unit(widened["delta"], widened["ci_low"], widened["ci_high"])
    significant = int(((table["delta"] > 0) & (table["q_value"] < 1 - CONFIDENCE)).sum())
    return Estimate(
        best.statistic,
        best.ci_low,
        best.ci_high,
        critical=best.critical,
        note=unchanged_note(unchanged, len(table), units, rows),
        evidence={**best.evidence, "significant": significant, "rows": rows},
    )


def mean_removal(table: pd.DataFrame, rows: float) -> Estimate:
    """The mean change over every unit's removal (the expected change from disabling a unit
    drawn at random), with a conservative interval: the units' changes are read on the same
    rows and correlate, and the standard error of a mean is at most the mean of the standard
    errors, so each side's half-width is the mean of the units' half-widths on that side
    (units that changed no prediction widened as in `best_removal`)."""
    widened, unchanged = widen_unchanged(table, rows)
    delta = widened["delta"].to_numpy(dtype=float)  # [units]
    below = float((delta - widened["ci_low"]).mean())
    above = float((widened["ci_high"] - delta).mean())
    mean = float(delta.mean())
    return Estimate(
        mean,
        mean - below,
        mean + above,
        note=unchanged_note(unchanged, len(table), "heads", rows),
        evidence={"units": len(table), "rows": rows},
    )
