"""How often a corrected pattern-type share's interval covers the true share, and how often
the claim "each type recurs" is contradicted although it holds, where the share sits at the
claim's boundary: `python -m pipeline.claims.boundary_coverage` writes the table that
docs/statistics.md shows (outputs/reference/boundary_coverage.md), the boundary rows beside
`coverage`'s grid.

Each replicate draws what one run of the patterns stages would give, for a type at a true
share of 0.5, 1 and 2 times the claim's threshold (one head's worth of maps, 1/`HEADS`):
- the labelled maps: `labelled` maps of the type, each recalled with probability `recall`,
  and `others` maps of other types, each called the type with probability
  `false_positive`, each map from an example of its own; one draw, shared by every seed
  (the stage's cross-validated predictions are the same for every fine-tuning seed);
- per seed, the applied maps: `EXAMPLES` x `HEADS` maps, each called the type with
  probability p x recall + (1 - p) x false_positive, its share's 95% interval normal
  (maps independent: the stage's interval over examples is wider where maps cluster);
- the corrected share and its interval (`shares.corrected_shares`, `RESAMPLES` draws), in
  heads' worth of maps as `kovaleva.types_recur` reads it, and with several seeds the
  pooled interval (`seeds.across_seeds`).
Coverage counts the intervals that hold the true share; a false contradiction is a
`contradicted` verdict (after `rules.settle`) where the true share is at least the
threshold; both are shares of the replicates where the type is identifiable (the last
column gives the others, on which the claim is not testable). Two classifiers: the block
case (recall 5 of 20, false positives 11 of 696, as the committed cross-validation gave for
two-sentence maps under registry version 3, and 7 of 696 under version 4's retrained
networks) and a well-recalled type. Labelled maps drawn by the recorded designs from a
population with boundary maps, where today's and the design-weighted error rates part:
`design_coverage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.claims.coverage import LOWEST_COVERAGE, rows_on_every_core, write_simulated_table
from pipeline.claims.rules import Beyond, Estimate, settle
from pipeline.claims.seeds import across_seeds
from pipeline.claims.share_notes import below_resolution
from pipeline.claims.shares import SHARE_RESAMPLES, corrected_shares
from pipeline.claims.thresholds import RECURS

HEADS = 72  # MiniLM-L6's 6 x 12 heads: the threshold is a share of 1/72
EXAMPLES = 64  # examples per task whose maps the classifier labels (the quick profile's)
MULTIPLES = (0.5, 1.0, 2.0)  # true shares, in thresholds
SEED_COUNTS = (1, 3)
RESAMPLES = SHARE_RESAMPLES  # per interval, as the claims stage draws them
REPLICATES = 2000
MOST_FALSE_CONTRADICTIONS = 0.025  # one tail of a 95% interval
TYPES = ("type", "other")
TABLE = Path("outputs/reference/boundary_coverage.md")
HEADER = (
    "| classifier | seeds | true share (thresholds) | coverage | false contradictions "
    "| decided | below resolution | not identifiable |"
)


@dataclass(frozen=True)
class Classifier:
    name: str
    labelled: int  # maps of the type labelled by eye
    recall: float
    others: int  # maps of other types labelled by eye
    false_positive: float


CLASSIFIERS = (
    Classifier("block case: recall 5/20, false positives 11/696", 20, 5 / 20, 696, 11 / 696),
    Classifier("well recalled: recall 0.8 of 180, false positives 3% of 536", 180, 0.8, 536, 0.03),
)


@dataclass(frozen=True)
class BoundaryCoverage:
    coverage: float
    false_contradictions: float  # NaN where the claim is false (true share below threshold)
    decided: float  # supported or contradicted
    below_resolution: float
    not_identifiable: float  # share of replicates whose labelled maps leave the type unknown


def _labelled(c: Classifier, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One draw of the labelled maps' (actual, predicted) labels, each map from an input
    example of its own."""
    hits = rng.random(c.labelled) < c.recall  # [n]
    wrong = rng.random(c.others) < c.false_positive  # [m]
    actual = np.array(["type"] * c.labelled + ["other"] * c.others)
    predicted = np.concatenate([np.where(hits, "type", "other"), np.where(wrong, "type", "other")])
    return actual, predicted, np.arange(len(actual)).astype(str)


def _one_seed(
    c: Classifier, share: float, labelled: tuple[np.ndarray, np.ndarray, np.ndarray], seed: int
) -> Estimate:
    """One seed's corrected share in heads' worth of maps, as types_recur gives it."""
    rng = np.random.default_rng([seed, 1])  # apart from the interval's own draws (`seed`)
    maps = EXAMPLES * HEADS
    called = share * c.recall + (1 - share) * c.false_positive
    q = rng.binomial(maps, called) / maps
    half = 1.96 * np.sqrt(q * (1 - q) / maps)
    observed = np.array([q, 1 - q])
    found = corrected_shares(
        observed, observed - half, observed + half, *labelled, TYPES, 0.0, RESAMPLES, seed
    )
    numbers = (found.corrected[0], found.ci_low[0], found.ci_high[0])
    if np.isnan(numbers).any():  # not identifiable on this draw of the labelled maps
        return Estimate(np.nan, np.nan, np.nan)
    return Estimate(*(HEADS * float(v) for v in numbers), unresolved=below_resolution(found))


def simulate(
    c: Classifier, multiple: float, seeds: int, *, replicates: int = REPLICATES, rng_seed: int = 0
) -> BoundaryCoverage:
    """One row of the table (module docstring)."""
    rng = np.random.default_rng(rng_seed)
    share = multiple * RECURS.value / HEADS
    rule = Beyond(RECURS)
    covered = contradicted = decided = unresolved = runs = 0
    for _ in range(replicates):
        labelled = _labelled(c, rng)
        per_seed = [_one_seed(c, share, labelled, int(s)) for s in rng.integers(0, 2**31, seeds)]
        if any(m.undefined for m in per_seed):
            continue  # the claim is not testable on this draw: no interval to cover
        pooled = across_seeds(per_seed)
        verdict, _ = settle(rule(pooled), pooled)
        runs += 1
        covered += pooled.ci_low <= HEADS * share <= pooled.ci_high
        contradicted += verdict == "contradicted"
        decided += verdict in ("supported", "contradicted")
        unresolved += bool(pooled.unresolved)
    holds = multiple >= 1
    return BoundaryCoverage(
        covered / runs,
        contradicted / runs if holds else float("nan"),
        decided / runs,
        unresolved / runs,
        1 - runs / replicates,
    )


def meets_bar(coverage: float, false_contradictions: float, runs: float) -> bool:
    """The bar each row is held to, each part read with its Monte Carlo error over `runs`
    replicates: coverage at least `LOWEST_COVERAGE` (95% less two standard errors at 2,000
    replicates), and false contradictions (NaN: the claim is false there) at most
    `MOST_FALSE_CONTRADICTIONS` plus two standard errors of that rate, which a calibrated
    interval's one side reaches exactly at the threshold."""
    rate = MOST_FALSE_CONTRADICTIONS
    most = rate + 2 * np.sqrt(rate * (1 - rate) / runs)
    return coverage >= LOWEST_COVERAGE and not false_contradictions > most


def boundary_row(c: Classifier, seeds: int, multiple: float, replicates: int = REPLICATES) -> str:
    """One row of the table, as Markdown (each row is seeded alike, so any row can be
    recomputed on its own)."""
    found = simulate(c, multiple, seeds, replicates=replicates)
    false = "-" if np.isnan(found.false_contradictions) else f"{found.false_contradictions:.3f}"
    return (
        f"| {c.name} | {seeds} | {multiple:g} | {found.coverage:.3f} | {false} "
        f"| {found.decided:.3f} | {found.below_resolution:.3f} | {found.not_identifiable:.3f} |"
    )


def boundary_table(replicates: int = REPLICATES) -> str:
    """Every row as the Markdown table docs/statistics.md shows, the rows computed on every
    core (each is seeded on its own, so the table does not depend on how many)."""
    grid = [(c, k, m, replicates) for c in CLASSIFIERS for k in SEED_COUNTS for m in MULTIPLES]
    rows = rows_on_every_core(boundary_row, grid)
    return "\n".join([HEADER, "|---|---|---|---|---|---|---|---|", *rows])


def main() -> None:
    write_simulated_table(
        f"Simulate corrected shares at the claim's boundary and write {TABLE}.",
        boundary_table,
        TABLE,
        REPLICATES,
    )


if __name__ == "__main__":
    main()
