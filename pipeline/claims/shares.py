"""Pattern-type shares corrected for the classifier's errors (adjusted classify-and-count).

The classifier labels every map of a task; the share it calls type j, q_j, mixes the true
shares p through its error rates: q = Rᵀ p, where R[i, j] = P(called j | truly i) is read
off the cross-validated predictions on maps labelled by eye that stand for the task's maps
(`design_weights`). The corrected shares solve
that system in the least-squares sense on the simplex (p >= 0, Σ p = 1); with two types
and no constraint active this is the textbook p_1 = (q_1 - fpr) / (tpr - fpr).

A type is *identifiable* when its maps are called that type more often than other maps
are: the 95% lower bound of recall - false-positive rate (over the labelled maps) is above
0. Otherwise its share cannot be told from the others' errors, whatever the counts (block,
on the rule-stratified round's few block maps).

R must rest on maps drawn independently of the classifier's errors given their true type.
The labelling rounds drawn at the classifier's boundaries (top-k by its uncertainty: every
other map had probability 0 of being drawn) or hunting one type hold the maps it errs on
most, so their error rates are not the task's. R therefore rests on the rule-stratified
round alone (`DESIGN_ROUND`: a fixed number of maps of each threshold-rule class in each
(variant, task) cell, drawn at random within it), each map weighted by the inverse of its
stratum's inclusion probability, N_s / n_s: N_s the run's own maps of that (variant, task,
rule class), n_s the labelled maps of that stratum (Horvitz-Thompson). The weighted counts
estimate the confusion counts of every map of the run's cells; the other rounds serve the
classifier's training only. A row's weighted counts count at their effective number: Kish's
(Σ w)² / Σ w², over the design effect below.

The labelled maps are not independent: several maps come from one input example (1-7 of
them; both variants of an example are one example), and a classifier that errs on one of an
example's maps tends to err on its others. Every draw of the labelled maps is therefore by
example: the identifiability check resamples examples with replacement, and the rates'
draws count each type's maps at their effective number, their count over the row's design
effect (`design_effects`: the largest, over the row's rates, of the variance of the rate
between examples over its variance with independent maps; never below 1), as Korn and
Graubard's Clopper-Pearson interval for clustered samples does.

The interval (95%) draws, per resample, everything the estimate rests on:
- each type's row of error rates R*[i] from the exact (Clopper-Pearson) confidence
  distribution of its effective counts, on the side of the bound being computed. With two
  types: for type k's upper bound, its recall is drawn from Beta(c, n - c + 1), whose
  quantile is the rate's exact lower bound, and so is the false-positive rate; both drawn
  low make k's share high (for a bound above 0, the side a positive threshold reads); for
  its lower bound, from Beta(c + 1, n - c). With more types, k's row carries that one
  pseudo-count and the other rows one together, split evenly (one each would count the
  pooled false-positive rate's pseudo-count once per row). A single symmetric prior
  (Jeffreys, before) undercovered at the claim's boundary: with 20 labelled block maps, 5
  recalled, its interval was falsely contradicted at the threshold (`boundary_coverage`)
  more often than a 95% interval's one side allows (2.5%).
  Not the labelled maps resampled with replacement: with few maps a bootstrap's spread
  shrinks with the count itself (a type never called by mistake in the labelled set gets no
  spread at all);
- the observed shares q*, normal around q with each share's standard error read off its 95%
  interval over examples, plus the classifier's seed spread (two ensembles of different
  seeds differ by at most `seed_change` on any share; taken as the spread of one seed's
  share, sd = seed_change / √2, for every type: conservative, since it is a maximum).
Each draw is solved without the constraint p >= 0 (Σ p = 1 kept): clipping every draw at 0
piles the draws of a share near 0 onto 0 itself, and the percentile interval of a share
whose draws are mostly clipped collapses to [0, 0], as if the classifier had measured it
exactly. Unclipped, the interval keeps the width the data give it and may reach below 0;
the estimate itself stays on the simplex. Type k's bounds are the 2.5th percentile of its
low-side draws and the 97.5th of its high-side draws.

A type is *below the classifier's resolution* when its observed share's 95% upper bound
(over examples) is below the exact 95% lower bound of its false-positive rate (at the
effective counts): the
classifier calls more maps that type by mistake than the run shows at all, so the
correction's model does not fit the data and says nothing of the true share. A claim on
such a type is inconclusive, whatever its interval (kovaleva.py; rules.Estimate.unresolved).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls
from scipy.stats import beta

from pipeline.claims.thresholds import CONFIDENCE, Z_CONFIDENCE

SUM_WEIGHT = 1e3  # weight of the Σ p = 1 row in the least-squares system
SHARE_RESAMPLES = 1000  # joint draws behind each corrected share's interval
DESIGN_ROUND = 1  # the labelling round drawn by rule class in every label folder (its README)


def design_weights(strata: Sequence[str], population: Mapping[str, float]) -> np.ndarray:
    """Per labelled map [N]: the inverse of its stratum's inclusion probability, N_s / n_s,
    with n_s the labelled maps of its stratum (`strata` [N] names each map's) and N_s the
    maps of that stratum among those the labelled maps stand for (`population`; a stratum
    it lacks weighs 0). A stratum of the population without a labelled map cannot be
    stood for: a clear error."""
    strata = np.asarray(strata)
    names, inverse, labelled = np.unique(strata, return_inverse=True, return_counts=True)
    missing = sorted(s for s, n in population.items() if n > 0 and s not in set(names))
    if missing:
        raise ValueError(
            f"shares: no labelled map of stratum {missing[0]} ({population[missing[0]]:g} "
            "maps of the run): label some of its maps in the rule-stratified round"
        )
    size = np.array([float(population.get(s, 0.0)) for s in names])  # [S]
    return (size / labelled)[inverse]


def example_counts(
    actual: np.ndarray,
    predicted: np.ndarray,
    examples: np.ndarray,
    classes: Sequence[str],
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """C [E, K, K]: per input example, C[e, i, j] = its labelled maps labelled classes[i]
    that the classifier called classes[j] (`examples` [N] names each map's example), each
    map counted at its weight (`weights` [N]; default 1), in order of the examples' first
    maps; summed over examples, the confusion counts."""
    names, first, example = np.unique(examples, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # [E]: each example's rank by its first map
    index = {name: k for k, name in enumerate(classes)}
    k = len(classes)
    counts = np.zeros((len(names), k, k))
    rows, cols = [index[a] for a in actual], [index[p] for p in predicted]
    np.add.at(counts, (order[example], rows, cols), 1 if weights is None else weights)
    return counts


def resampled_counts(
    per_example: np.ndarray, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """C* [B, K, K]: the confusion counts of `resamples` draws of the examples with
    replacement, from each example's counts `per_example` [E, K, K]."""
    e = len(per_example)
    times = rng.multinomial(e, np.full(e, 1 / e), resamples)  # [B, E]: each example's draws
    return np.einsum("be,ekl->bkl", times, per_example)


def kish_sizes(counts: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """Per labelled type [K]: the effective number of its weighted maps, (Σ w)² / Σ w², from
    the weighted counts [K, K] and the sums of the squared weights [K] (unit weights: the
    count itself; no map: 0)."""
    total = counts.sum(1)  # [K]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(squares > 0, total**2 / squares, 0.0)


def design_effects(per_example: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
    """Per labelled type [K], from each example's (weighted) counts [E, K, K]: the largest,
    over the row's rates R[i, j], of their variance between examples (the ratio estimator's,
    by linearisation) over their variance with independent maps of the row's effective
    number `sizes` [K] (`kish_sizes`; default: the counts, unit weights); at least 1 (a
    type with maps of fewer than two examples: 1)."""
    effects = np.ones(per_example.shape[1])
    totals = per_example.sum((0, 2)) if sizes is None else sizes  # [K]
    for i in range(per_example.shape[1]):
        row = per_example[:, i, :]  # [E, K]
        maps = row.sum(1)  # [E]
        row, maps = row[maps > 0], maps[maps > 0]
        n, e = maps.sum(), len(maps)
        if e < 2 or totals[i] <= 1:
            continue
        rate = row.sum(0) / n  # [K]
        between = e / (e - 1) * ((row - rate * maps[:, None]) ** 2).sum(0) / n**2  # [K]
        independent = rate * (1 - rate) / (totals[i] - 1)  # [K]: maps of their own examples give 1
        varies = independent > 0
        if varies.any():
            effects[i] = max(1.0, float((between[varies] / independent[varies]).max()))
    return effects


def side_rates(
    counts: np.ndarray, row: int, column: int, high: bool, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """R* [B, T, K]: draws of T rows of rates from their (effective) counts [T, K], from the
    exact confidence distributions on one side for the type whose row is `row` and whose
    column is `column` (module docstring). Its own row carries one pseudo-count and the
    other rows one together, split evenly, as the two-type case's recall and pooled
    false-positive rate do: `high` (its share drawn high), the column's cells start from
    none and the one goes to the other cells; else the column's cells take it. A Dirichlet
    drawn through its gamma variables, since a cell may start from 0 (a rate of 0 with no
    success draws 0)."""
    t, k = counts.shape
    weight = np.full((t, 1), 1 / max(t - 1, 1))  # [T, 1]: the other rows share one
    weight[row] = 1.0
    in_column = np.zeros(k, dtype=bool)
    in_column[column] = True
    cells = np.where(in_column, 0.0, 1 / max(k - 1, 1)) if high else in_column  # [K]
    start = weight * cells  # [T, K]: each row's pseudo-counts
    gammas = rng.standard_gamma(counts + start, (resamples, t, k))  # [B, T, K]
    return gammas / gammas.sum(-1, keepdims=True)


def error_rates(counts: np.ndarray) -> np.ndarray:
    """R [..., K, K] from counts C [..., K, K]: R[i, j] = the share of maps labelled i that
    the classifier called j; a type with no labelled map gets a row of NaN."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / counts.sum(-1, keepdims=True)


def adjusted_shares(observed: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """True shares p [T] of T types from the classifier's shares `observed` [K] of its K
    labels and the types' error rates `rates` [T, K] (T <= K: the types solved for):
    argmin ‖ratesᵀ p - observed‖ over p >= 0 with Σ p = 1."""
    system = np.vstack([rates.T, SUM_WEIGHT * np.ones(len(rates))])  # [K + 1, T]
    target = np.append(observed, SUM_WEIGHT)  # [K + 1]
    shares, _ = nnls(system, target)
    return shares / shares.sum()


def unconstrained_shares(observed: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """As `adjusted_shares`, without p >= 0, for B draws at once: p [B, T] = argmin
    ‖ratesᵀ p - observed‖ with Σ p = 1, from `observed` [B, K] and `rates` [B, T, K] (a
    share may come out below 0); the draws behind an interval (module docstring)."""
    weight = np.full((len(rates), 1, rates.shape[1]), SUM_WEIGHT)  # [B, 1, T]
    system = np.concatenate([rates.transpose(0, 2, 1), weight], axis=1)  # [B, K + 1, T]
    target = np.concatenate([observed, np.full((len(observed), 1), SUM_WEIGHT)], 1)  # [B, K+1]
    return (np.linalg.pinv(system) @ target[..., None])[..., 0]


def exact_lower(successes: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """The exact (Clopper-Pearson) 95% lower bound of a rate [K] from its counts [K]; 0 for
    no success, NaN for no trial."""
    successes, trials = np.asarray(successes, float), np.asarray(trials, float)
    tail = (1 - CONFIDENCE) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = beta.ppf(tail, successes, trials - successes + 1)
    return np.where(trials > 0, np.where(successes > 0, low, 0.0), np.nan)


def recall_and_false_positive(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per type [..., K] each, from counts C [..., K, K]: the share of its labelled maps
    called that type (recall; NaN without labelled maps), and the share of the other types'
    labelled maps, pooled, called that type (false-positive rate)."""
    labelled, called = counts.sum(-1), counts.sum(-2)  # [..., K] each
    recalled = counts.diagonal(axis1=-2, axis2=-1)  # [..., K]
    others = labelled.sum(-1, keepdims=True) - labelled  # [..., K]
    with np.errstate(invalid="ignore", divide="ignore"):
        return recalled / labelled, (called - recalled) / others


def separation(counts: np.ndarray) -> np.ndarray:
    """recall - false-positive rate per type [..., K], from counts C [..., K, K]: how much
    more often a type's maps are called that type than other types' maps are."""
    recall, false_positive = recall_and_false_positive(counts)
    return recall - false_positive


@dataclass(frozen=True)
class CorrectedShares:
    """Per type (in `classes` order): the classifier's share, the corrected share with its
    95% interval (NaN for a type that is not identifiable), recall - false-positive rate
    with its 95% lower bound, the false-positive rate, and the labelled maps and how many of
    them the classifier called their own type in cross-validation."""

    classes: tuple[str, ...]
    raw: np.ndarray  # [K]
    corrected: np.ndarray  # [K]
    ci_low: np.ndarray  # [K]
    ci_high: np.ndarray  # [K]
    separation: np.ndarray  # [K]
    separation_low: np.ndarray  # [K]
    false_positive: np.ndarray  # [K]
    false_positive_low: np.ndarray  # [K]: its exact 95% lower bound, at the effective counts
    observed_high: np.ndarray  # [K]: the classifier's share's 95% upper bound
    labelled: np.ndarray  # [K]
    recalled: np.ndarray  # [K]

    @property
    def identifiable(self) -> np.ndarray:
        """bool [K]: the 95% lower bound of recall - false-positive rate is above 0 (never
        for a type without labelled maps)."""
        return np.nan_to_num(self.separation_low, nan=0.0) > 0

    def unresolved(self) -> list[str]:
        """Identifiable types whose corrected share's interval reaches 0."""
        return [c for c, low in zip(self.classes, self.ci_low, strict=True) if low <= 0]

    def below_resolution(self) -> list[str]:
        """Types whose observed share's upper bound is below the exact lower bound of their
        false-positive rate (module docstring): the correction cannot place their share."""
        below = np.nan_to_num(self.observed_high, nan=np.inf) < np.nan_to_num(
            self.false_positive_low, nan=-np.inf
        )  # [K]
        return [c for c, b in zip(self.classes, below, strict=True) if b]


def corrected_shares(
    observed: np.ndarray,
    observed_low: np.ndarray,
    observed_high: np.ndarray,
    actual: Sequence[str],
    predicted: Sequence[str],
    examples: Sequence[str],
    classes: Sequence[str],
    seed_change: float,
    resamples: int,
    seed: int,
    weights: np.ndarray | None = None,
) -> CorrectedShares:
    """Corrected shares of `classes` from the classifier's shares [K] with their 95%
    intervals [K], its cross-validated predictions on the labelled maps (`actual` by eye,
    `predicted` by the classifier, `examples` the input example each map comes from, each
    map counted at its design weight, `weights` [N], default 1: `design_weights`) and the
    largest share change between two classifier seeds; intervals from `resamples` joint
    draws per side (module docstring) seeded by `seed`.

    Only identifiable types are solved for: a type that cannot be identified is left out
    of the system (taken as absent, its share NaN), since any share given to it would only
    echo its errors (with block in it, block takes most of the vertical maps)."""
    observed = np.asarray(observed, dtype=float)
    actual, predicted, examples = np.asarray(actual), np.asarray(predicted), np.asarray(examples)
    per_example = example_counts(actual, predicted, examples, classes, weights)  # [E, K, K]
    counts = per_example.sum(0)  # [K, K]
    if weights is None:
        sizes = counts.sum(1)  # [K]: unit weights, each map counts once
        maps = counts
    else:
        squares = example_counts(actual, predicted, examples, classes, weights**2)
        sizes = kish_sizes(counts, squares.sum((0, 2)))  # [K]
        used = weights > 0
        maps = example_counts(actual[used], predicted[used], examples[used], classes).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):  # a row without maps stays 0
        scale = design_effects(per_example, sizes) * counts.sum(1) / sizes  # [K]
    effective = np.nan_to_num(counts / scale[:, None])  # [K, K]: unit weights, counts / deff
    rng = np.random.default_rng(seed)
    separations = separation(resampled_counts(per_example, resamples, rng))  # [B, K]
    tail = (1 - CONFIDENCE) / 2 * 100
    with np.errstate(invalid="ignore"):
        separation_low = np.percentile(separations, tail, axis=0)  # [K]: NaN if never drawn
    known = np.nan_to_num(separation_low, nan=0.0) > 0  # [K]
    spread = np.hypot(
        (np.asarray(observed_high) - np.asarray(observed_low)) / (2 * Z_CONFIDENCE),
        seed_change / np.sqrt(2),
    )  # [K]
    corrected, low, high = np.full((3, len(classes)), np.nan)
    if known.any():
        # the point estimate solves the system as each draw does (a share may fall below 0),
        # so that it lies inside the interval its draws make
        corrected[known] = unconstrained_shares(observed[None], error_rates(counts)[known][None])[0]
        shares = observed + rng.normal(0, spread, (resamples, len(classes)))  # [B, K]
        total = shares.sum(1, keepdims=True)  # [B, 1]
        composed = total[:, 0] > 0  # a draw with no positive total has no composition
        shares = shares[composed] / total[composed]  # [B', K]
        solved = effective[known]  # [T, K]
        for t, k in enumerate(np.flatnonzero(known)):  # type k is the system's t-th unknown
            for bound, side, quantile in ((low, False, tail), (high, True, 100 - tail)):
                rates = side_rates(solved, t, k, side, resamples, rng)[composed]
                if len(shares):
                    draws = unconstrained_shares(shares, rates)[:, t]  # [B']
                    bound[k] = np.percentile(draws, quantile)
    recall, false_positive = recall_and_false_positive(counts)
    labelled = maps.sum(1)  # [K]
    wrongly_called = effective.sum(0) - np.diag(effective)  # [K], effective maps
    others = effective.sum() - effective.sum(1)  # [K], effective maps
    return CorrectedShares(
        classes=tuple(classes),
        raw=observed,
        corrected=corrected,
        ci_low=low,
        ci_high=high,
        separation=recall - false_positive,
        separation_low=separation_low,
        false_positive=false_positive,
        false_positive_low=exact_lower(wrongly_called, others),
        observed_high=np.asarray(observed_high, dtype=float),
        labelled=labelled,
        recalled=np.diag(maps),
    )
