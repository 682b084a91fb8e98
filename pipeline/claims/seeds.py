"""One interval over fine-tuning seeds and examples, from each seed's own interval.

Every seed's model is scored on the same sampled examples, so a claim has, per seed, an
estimate and a 95% interval over those examples. The combined estimate is the mean over
seeds; its interval adds, in quadrature,
- the seeds' spread: t(k-1) standard errors of the mean of k seed estimates (a t quantile,
  since k is 2-5: with 3 seeds it is 4.30, not 1.96), and
- the examples' spread: the mean of the seeds' own half-widths, on each side. The examples
  are shared, so their noise is common to all seeds and does not shrink with k. A seed
  whose interval has no width (a statistic collapsed at a boundary, such as a share clipped
  at 0) is left out of that mean: its zero is not evidence of precision, and averaging it in
  would shrink the pooled interval below every seed's real one. With no seed of positive
  width, the pooled interval is the seeds' spread alone, and the claim cannot be decided
  on it (`unresolved`; rules.settle).
Why not a two-level percentile bootstrap (seeds, then examples)? Resampling 3 seeds with
replacement treats them as the whole population of seeds: it shrinks their spread by
(k-1)/k and uses normal quantiles, and in simulation (`coverage`) its 95% interval covers
the mean over seeds and examples well below 95% of the time when seeds differ. The
interval here keeps >= 95% there (`python -m pipeline.claims.coverage` writes the table that
docs/statistics.md shows; tests/claims/test_coverage.py checks it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import t

from pipeline.claims.rules import Estimate
from pipeline.claims.thresholds import CONFIDENCE
from pipeline.core.errors import PipelineError

COLLAPSED = "no seed's interval has any width: the seeds' spread alone cannot decide it"


def across_seeds(per_seed: Sequence[Estimate]) -> Estimate:
    """The mean of the seeds' statistics with an interval over seeds and examples; one seed
    gives its own. `critical` is the interval's half-width over the estimate's standard error
    (the seeds' standard error of the mean and the examples' own, in quadrature), so
    `detectable` is the half-width plus 0.84 standard errors rather than a per-seed critical
    value applied to the whole width. A seed whose estimate lies outside its own interval
    fails in one line: its distances to the bounds would be negative, and the pooled bounds
    (which add them in quadrature) would land on the wrong side of the estimate. `evidence`
    keeps both parts of the half-width (`between_seeds`, `within_seeds`) for the rows-needed
    reckoning (evaluate.py)."""
    outside = [m for m in per_seed if not m.inside]
    if outside:
        m = outside[0]
        raise PipelineError(
            f"claims: a seed's estimate {m.statistic:.4g} lies outside its own interval "
            f"[{m.ci_low:.4g}, {m.ci_high:.4g}]: the measure must give the statistic its "
            "interval is drawn for (pipeline/claims/rules.py), not a clipped one"
        )
    if len(per_seed) == 1:
        return per_seed[0]
    estimates = np.array([m.statistic for m in per_seed])  # [k]
    k = len(estimates)
    spread = estimates.std(ddof=1) / math.sqrt(k)
    between = t.ppf(1 - (1 - CONFIDENCE) / 2, k - 1) * spread
    wide = [m for m in per_seed if m.ci_high > m.ci_low]  # the seeds with a real interval
    below = float(np.mean([m.statistic - m.ci_low for m in wide])) if wide else 0.0
    above = float(np.mean([m.ci_high - m.statistic for m in wide])) if wide else 0.0
    within = (below + above) / 2
    examples_error = (
        float(np.mean([(m.ci_high - m.ci_low) / (2 * m.critical) for m in wide])) if wide else 0.0
    )
    standard_error = math.hypot(spread, examples_error)
    half_width = math.hypot(between, within)
    mean = float(estimates.mean())
    rows = {n: v for n, v in per_seed[0].evidence.items() if n == "rows"}
    notes = dict.fromkeys(m.note for m in per_seed if m.note)
    unresolved = dict.fromkeys(m.unresolved for m in per_seed if m.unresolved)
    if not wide:
        unresolved[COLLAPSED] = None
    return Estimate(
        mean,
        mean - math.hypot(between, below),
        mean + math.hypot(between, above),
        critical=half_width / standard_error if standard_error > 0 else per_seed[0].critical,
        note="; ".join(notes),
        evidence={"seeds": k, "between_seeds": float(between), "within_seeds": within} | rows,
        unresolved="; ".join(unresolved),
    )
