"""One interval over fine-tuning seeds and examples, from each seed's own interval.

Every seed's model is scored on the same sampled examples, so a claim has, per seed, an
estimate and a 95% interval over those examples. The combined estimate is the mean over
seeds; its interval adds, in quadrature,
- the seeds' spread: t(k-1) standard errors of the mean of k seed estimates (a t quantile,
  since k is 2-5: with 3 seeds it is 4.30, not 1.96), and
- the examples' spread: the mean of the seeds' own half-widths, on each side. The examples
  are shared, so their noise is common to all seeds and does not shrink with k.
Why not a two-level percentile bootstrap (seeds, then examples)? Resampling 3 seeds with
replacement treats them as the whole population of seeds: it shrinks their spread by
(k-1)/k and uses normal quantiles, and in simulation (`coverage`) its 95% interval covers
the mean over seeds and examples well below 95% of the time when seeds differ. The
interval here keeps >= 95% there (tests/test_claims_statistics.py; docs/statistics.md gives the
table that `python -m pipeline.claims.seeds` prints).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import t

from pipeline.claims.rules import Measured
from pipeline.claims.thresholds import CONFIDENCE


def across_seeds(per_seed: Sequence[Measured]) -> Measured:
    """The mean of the seeds' statistics with an interval over seeds and examples; one seed
    gives its own. `critical` is the interval's half-width over the estimate's standard error
    (the seeds' standard error of the mean and the examples' own, in quadrature), so
    `detectable` is the half-width plus 0.84 standard errors rather than a per-seed critical
    value applied to the whole width. `evidence` keeps both parts of the half-width
    (`between_seeds`, `within_seeds`) for the rows-needed reckoning (table.py)."""
    if len(per_seed) == 1:
        return per_seed[0]
    estimates = np.array([m.statistic for m in per_seed])  # [k]
    k = len(estimates)
    spread = estimates.std(ddof=1) / math.sqrt(k)
    between = t.ppf(1 - (1 - CONFIDENCE) / 2, k - 1) * spread
    below = np.mean([m.statistic - m.ci_low for m in per_seed])
    above = np.mean([m.ci_high - m.statistic for m in per_seed])
    within = float((below + above) / 2)
    examples_error = float(np.mean([(m.ci_high - m.ci_low) / (2 * m.critical) for m in per_seed]))
    standard_error = math.hypot(spread, examples_error)
    half_width = math.hypot(between, within)
    mean = float(estimates.mean())
    rows = {n: v for n, v in per_seed[0].evidence.items() if n == "rows"}
    notes = dict.fromkeys(m.note for m in per_seed if m.note)
    return Measured(
        mean,
        mean - math.hypot(between, below),
        mean + math.hypot(between, above),
        critical=half_width / standard_error if standard_error > 0 else per_seed[0].critical,
        note="; ".join(notes),
        evidence={"seeds": k, "between_seeds": float(between), "within_seeds": within} | rows,
    )


def simulate_coverage(
    seeds: int,
    seed_sd: float,
    *,
    examples: int = 100,
    replicates: int = 400,
    resamples: int = 300,
    rng_seed: int = 0,
) -> dict[str, float]:
    """How often each interval covers the true mean over seeds and examples (0 here).

    Each replicate draws `examples` shared examples (sd 1 each), a seed effect per seed
    (sd `seed_sd`) and a seed-by-example term (sd 0.5); a seed's statistic is the mean of
    its example values, with a 95% percentile bootstrap interval over examples. Returns
    the coverage of `across_seeds` and of the two-level percentile bootstrap (seeds with
    replacement, then examples, the same example draw for every seed)."""
    rng = np.random.default_rng(rng_seed)
    tail = (1 - CONFIDENCE) / 2 * 100
    hits = {"across_seeds": 0, "two_level_bootstrap": 0}
    for _ in range(replicates):
        shared = rng.normal(0, 1, examples)  # [N]
        values = (
            shared + rng.normal(0, seed_sd, (seeds, 1)) + rng.normal(0, 0.5, (seeds, examples))
        )  # [k, N]
        draws = rng.integers(0, examples, (resamples, examples))  # [B, N]
        boot = values[:, draws].mean(axis=-1)  # [k, B]
        low, high = np.percentile(boot, [tail, 100 - tail], axis=1)  # [k] each
        per_seed = [
            Measured(float(v), float(lo), float(hi))
            for v, lo, hi in zip(values.mean(axis=1), low, high, strict=True)
        ]
        combined = across_seeds(per_seed)
        hits["across_seeds"] += combined.ci_low <= 0 <= combined.ci_high
        picked = values[rng.integers(0, seeds, (resamples, seeds))]  # [B, k, N]
        examples_drawn = np.broadcast_to(draws[:, None, :], picked.shape)  # [B, k, N]
        two_level = np.take_along_axis(picked, examples_drawn, axis=2).mean(axis=(1, 2))  # [B]
        lo2, hi2 = np.percentile(two_level, [tail, 100 - tail])
        hits["two_level_bootstrap"] += lo2 <= 0 <= hi2
    return {name: count / replicates for name, count in hits.items()}


def coverage_table(
    seed_counts: Sequence[int] = (2, 3, 5), seed_sds: Sequence[float] = (0.0, 0.1, 0.3)
) -> str:
    """The simulated coverage of both 95% intervals as a Markdown table (docs/statistics.md); a
    seed's standard error over its 100 examples is about 0.11, so sd 0.3 is ~3 of them."""
    rows = [
        "| seeds | sd of the seed effect | `across_seeds` | two-level percentile bootstrap |",
        "|---|---|---|---|",
    ]
    for k in seed_counts:
        for sd in seed_sds:
            found = simulate_coverage(k, sd)
            ours, two_level = found["across_seeds"], found["two_level_bootstrap"]
            rows.append(f"| {k} | {sd:g} | {ours:.3f} | {two_level:.3f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    argparse.ArgumentParser(
        description="Print the simulated coverage of the seed interval (docs/statistics.md)."
    ).parse_args()
    print(coverage_table())
