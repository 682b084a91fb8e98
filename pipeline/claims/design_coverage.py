"""The corrected share's coverage where the labelled maps were drawn by the recorded designs:
`python -m pipeline.claims.design_coverage` writes the table that docs/statistics.md shows
(outputs/reference/design_coverage.md), beside `boundary_coverage`'s, for today's estimator
of the error rates R (every labelled map, unweighted) and the design-weighted one
(`shares.design_weights`: the rule-stratified round alone, each map at its stratum's maps in
the run over its stratum's labelled maps).

`boundary_coverage` draws its labelled maps from the very population it corrects, so it
cannot see maps chosen for being hard. Here one population, the maps of a run's eight
(variant, task) cells (`FRAME` maps), holds two things the labels record:
- *boundary maps*: the maps whose threshold-rule class is not their true type, the ones the
  classifier is least sure of, on which it recalls a type less often and calls other maps it
  more often (`Population`: the observed recall gap, 0.91 on MiniLM's rule-stratified round
  against 0.56 on its boundary rounds for vertical+diagonal);
- the labelling rounds as they were drawn: `PER_RULE_CLASS` maps of each rule class at random
  within it (round 1), then `BOUNDARY_MAPS` maps at the classifier's boundaries (top-k: every
  map off the boundary has probability 0 of being drawn).
Per replicate, one frame and one labelling, shared by every seed; per seed, the task's
applied maps (`EXAMPLES` x `HEADS`) drawn from the population, the classifier's share with
its normal interval, and the corrected share in heads' worth of maps (as
`boundary_coverage._one_seed`), pooled over seeds by `seeds.across_seeds`. Coverage, false
contradictions and the decided share are counted as in `boundary_coverage`. The whole
table took 15 minutes on 2 shared cores.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.claims.boundary_coverage import (
    EXAMPLES,
    HEADS,
    MULTIPLES,
    RESAMPLES,
    SEED_COUNTS,
    TYPES,
    BoundaryCoverage,
)
from pipeline.claims.coverage import rows_on_every_core, write_simulated_table
from pipeline.claims.rules import Beyond, Estimate, settle
from pipeline.claims.seeds import across_seeds
from pipeline.claims.share_notes import below_resolution
from pipeline.claims.shares import corrected_shares, design_weights
from pipeline.claims.thresholds import RECURS

FRAME = 8 * EXAMPLES * HEADS  # the run's maps over its eight (variant, task) cells
PER_RULE_CLASS = 84  # round 1: maps drawn at random within each rule class (MiniLM's)
BOUNDARY_MAPS = 144  # the later rounds, at the classifier's boundaries (2 of 5 classes' share)
REPLICATES = 2000  # per row of the design-weighted estimator, as `boundary_coverage`'s
TODAY_REPLICATES = 200  # per row of today's: enough to show coverage far below the bar
ESTIMATORS = ("every labelled map", "rule-stratified round, design-weighted")
TABLE = Path("outputs/reference/design_coverage.md")
HEADER = (
    "| population | R from | seeds | true share (thresholds) | replicates | coverage "
    "| false contradictions | decided | below resolution | not identifiable |"
)


@dataclass(frozen=True)
class Population:
    """Maps of a type and of other types; a map whose rule class is not its true type is a
    boundary map, where the classifier errs more."""

    name: str
    type_rule: float  # P(the rule calls a map the type | the type): 1 - its boundary share
    other_rule: float  # P(the rule calls a map the type | another type): others' boundary share
    recall: float  # P(called the type | the type, off the boundary)
    boundary_recall: float  # the same on the boundary
    false_positive: float  # P(called the type | another type, off the boundary)
    boundary_false_positive: float  # the same on the boundary

    def cells(self, share: float) -> np.ndarray:
        """P [2, 2] of (true type, rule class) cells, rows (type, other), columns (rule
        calls it the type, rule calls it other)."""
        return np.array(
            [
                [share * self.type_rule, share * (1 - self.type_rule)],
                [(1 - share) * self.other_rule, (1 - share) * (1 - self.other_rule)],
            ]
        )

    def called(self) -> np.ndarray:
        """P [2, 2] of being called the type, per (true type, rule class) cell."""
        return np.array(
            [
                [self.recall, self.boundary_recall],
                [self.boundary_false_positive, self.false_positive],
            ]
        )


POPULATIONS = (
    Population(
        "boundary maps 20% of the type's, 2% of the others'; recall 0.9 / 0.5, "
        "false positives 1% / 25%",
        0.8,
        0.02,
        0.9,
        0.5,
        0.01,
        0.25,
    ),
)


@dataclass(frozen=True)
class Labelled:
    """The labelled maps of one labelling: labels by eye and by the classifier, each map's
    round-1 stratum ('' for a boundary round's map), and the run's maps per stratum."""

    actual: np.ndarray  # [N]
    predicted: np.ndarray  # [N]
    strata: np.ndarray  # [N]
    population: dict[str, float]


RULE = ("rule:type", "rule:other")


def _maps(
    truth: str, stratum: str, count: int, rate: float, rng: np.random.Generator
) -> tuple[list[str], list[str], list[str]]:
    called = rng.random(count) < rate  # [count]
    return [truth] * count, list(np.where(called, "type", "other")), [stratum] * count


def labelling(pop: Population, share: float, rng: np.random.Generator) -> Labelled:
    """One frame of the run's maps and the labelled maps drawn from it by the two designs."""
    frame = rng.multinomial(FRAME, pop.cells(share).ravel()).reshape(2, 2)  # [type, rule]
    called = pop.called()
    actual, predicted, strata = [], [], []
    for c, stratum in enumerate(RULE):  # round 1: at random within each rule class
        drawn = rng.multivariate_hypergeometric(frame[:, c], min(PER_RULE_CLASS, frame[:, c].sum()))
        for t, truth in enumerate(TYPES):
            parts = _maps(truth, stratum, int(drawn[t]), called[t, c], rng)
            for whole, part in zip((actual, predicted, strata), parts, strict=True):
                whole += part
    boundary = np.array([frame[0, 1], frame[1, 0]])  # [type, other] maps on the boundary
    drawn = rng.multivariate_hypergeometric(boundary, min(BOUNDARY_MAPS, boundary.sum()))
    for t, truth in enumerate(TYPES):
        parts = _maps(truth, "", int(drawn[t]), called[t, 1 - t], rng)
        for whole, part in zip((actual, predicted, strata), parts, strict=True):
            whole += part
    population = {s: float(frame[:, c].sum()) for c, s in enumerate(RULE)}
    return Labelled(np.array(actual), np.array(predicted), np.array(strata), population)


def _one_seed(
    pop: Population, share: float, labels: Labelled, weighted: bool, seed: int
) -> Estimate:
    """One seed's corrected share in heads' worth of maps (as types_recur gives it)."""
    rng = np.random.default_rng([seed, 1])  # apart from the interval's own draws (`seed`)
    maps = EXAMPLES * HEADS
    q = (pop.cells(share) * pop.called()).sum()  # P(a map of the task is called the type)
    q = rng.binomial(maps, q) / maps
    half = 1.96 * np.sqrt(q * (1 - q) / maps)
    observed = np.array([q, 1 - q])
    used = labels.strata != "" if weighted else np.ones(len(labels.strata), dtype=bool)
    weights = design_weights(labels.strata[used], labels.population) if weighted else None
    found = corrected_shares(
        observed,
        observed - half,
        observed + half,
        labels.actual[used],
        labels.predicted[used],
        np.arange(used.sum()).astype(str),
        TYPES,
        0.0,
        RESAMPLES,
        seed,
        weights,
    )
    numbers = (found.corrected[0], found.ci_low[0], found.ci_high[0])
    if np.isnan(numbers).any():  # not identifiable on this draw of the labelled maps
        return Estimate(np.nan, np.nan, np.nan)
    return Estimate(*(HEADS * float(v) for v in numbers), unresolved=below_resolution(found))


def simulate(
    pop: Population,
    weighted: bool,
    multiple: float,
    seeds: int,
    *,
    replicates: int = REPLICATES,
    rng_seed: int = 0,
) -> BoundaryCoverage:
    """One row of the table (module docstring)."""
    rng = np.random.default_rng(rng_seed)
    share = multiple * RECURS.value / HEADS
    rule = Beyond(RECURS)
    covered = contradicted = decided = unresolved = runs = 0
    for _ in range(replicates):
        labels = labelling(pop, share, rng)
        per_seed = [
            _one_seed(pop, share, labels, weighted, int(s)) for s in rng.integers(0, 2**31, seeds)
        ]
        if any(m.undefined for m in per_seed):
            continue
        pooled = across_seeds(per_seed)
        verdict, _ = settle(rule(pooled), pooled)
        runs += 1
        covered += pooled.ci_low <= HEADS * share <= pooled.ci_high
        contradicted += verdict == "contradicted"
        decided += verdict in ("supported", "contradicted")
        unresolved += bool(pooled.unresolved)
    if not runs:
        return BoundaryCoverage(np.nan, np.nan, 0.0, 0.0, 1.0)
    return BoundaryCoverage(
        covered / runs,
        contradicted / runs if multiple >= 1 else float("nan"),
        decided / runs,
        unresolved / runs,
        1 - runs / replicates,
    )


def design_row(
    pop: Population, weighted: bool, seeds: int, multiple: float, replicates: int = REPLICATES
) -> str:
    """One row of the table, as Markdown (each row seeded alike)."""
    found = simulate(pop, weighted, multiple, seeds, replicates=replicates)
    false = "-" if np.isnan(found.false_contradictions) else f"{found.false_contradictions:.3f}"
    return (
        f"| {pop.name} | {ESTIMATORS[weighted]} | {seeds} | {multiple:g} | {replicates} "
        f"| {found.coverage:.3f} "
        f"| {false} | {found.decided:.3f} | {found.below_resolution:.3f} "
        f"| {found.not_identifiable:.3f} |"
    )


def design_table(replicates: int = REPLICATES) -> str:
    """Every row as the Markdown table docs/statistics.md shows, computed on every core:
    today's estimator's rows at `TODAY_REPLICATES` (at most `replicates`), the design-weighted
    one's at `replicates`."""
    grid = [
        (p, w, k, m, replicates if w else min(TODAY_REPLICATES, replicates))
        for p in POPULATIONS
        for w in (False, True)
        for k in SEED_COUNTS
        for m in MULTIPLES
    ]
    rows = rows_on_every_core(design_row, grid)
    return "\n".join([HEADER, "|---|---|---|---|---|---|---|---|---|---|", *rows])


def main() -> None:
    write_simulated_table(
        f"Simulate corrected shares under the recorded labelling designs and write {TABLE}.",
        design_table,
        TABLE,
        REPLICATES,
    )


if __name__ == "__main__":
    main()
