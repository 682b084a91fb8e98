"""Pattern-type shares corrected for the classifier's errors (adjusted classify-and-count).

The classifier labels every map of a task; the share it calls type j, q_j, mixes the true
shares p through its error rates: q = Rᵀ p, where R[i, j] = P(called j | truly i) is read
off the cross-validated predictions on the maps labelled by eye. The corrected shares solve
that system in the least-squares sense on the simplex (p >= 0, Σ p = 1); with two types
and no constraint active this is the textbook p_1 = (q_1 - fpr) / (tpr - fpr).

A type is *identifiable* when its maps are called that type more often than other maps
are: the 95% lower bound of recall - false-positive rate (over the labelled maps) is above
0. Otherwise its share cannot be told from the others' errors, whatever the counts (block:
12 labelled maps, none recalled).

The interval (95%, percentile) draws, per resample, everything the estimate rests on:
- each type's row of error rates R*[i] from a Dirichlet over its labelled maps' counts
  plus a Jeffreys pseudo-count of 1/2 per cell (`RATE_PRIOR`), so R* carries the finite
  labelled set's error. Not the labelled maps resampled with replacement, as before: with
  few maps a bootstrap's spread shrinks with the count itself (a type never called by
  mistake in the labelled set gets no spread at all), and at the claim's boundary its
  interval covered the true share in under 93% of simulated runs
  (`boundary_coverage`); identifiability still reads that bootstrap;
- the observed shares q*, normal around q with each share's standard error read off its 95%
  interval over examples, plus the classifier's seed spread (two ensembles of different
  seeds differ by at most `seed_change` on any share; taken as the spread of one seed's
  share, sd = seed_change / √2, for every type: conservative, since it is a maximum).
Each draw is solved without the constraint p >= 0 (Σ p = 1 kept): clipping every draw at 0
piles the draws of a share near 0 onto 0 itself, and the percentile interval of a share
whose draws are mostly clipped collapses to [0, 0], as if the classifier had measured it
exactly. Unclipped, the interval keeps the width the data give it and may reach below 0;
the estimate itself stays on the simplex.

A type is *below the classifier's resolution* when its observed share's 95% upper bound
(over examples) is below the exact 95% lower bound of its false-positive rate: the
classifier calls more maps that type by mistake than the run shows at all, so the
correction's model does not fit the data and says nothing of the true share. A claim on
such a type is inconclusive, whatever its interval (kovaleva.py; rules.Estimate.unresolved).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls
from scipy.stats import beta

from pipeline.claims.thresholds import CONFIDENCE, Z_CONFIDENCE

SUM_WEIGHT = 1e3  # weight of the Σ p = 1 row in the least-squares system
SHARE_RESAMPLES = 1000  # joint draws behind each corrected share's interval
RATE_PRIOR = 0.5  # Jeffreys: the pseudo-count each cell of a type's row of rates starts from


def confusion_counts(
    actual: Sequence[str], predicted: Sequence[str], classes: Sequence[str]
) -> np.ndarray:
    """C [K, K]: C[i, j] = maps labelled classes[i] that the classifier called classes[j]."""
    index = {name: k for k, name in enumerate(classes)}
    counts = np.zeros((len(classes), len(classes)))
    np.add.at(counts, ([index[a] for a in actual], [index[p] for p in predicted]), 1)
    return counts


def drawn_counts(
    actual: np.ndarray, predicted: np.ndarray, classes: Sequence[str], rows: np.ndarray
) -> np.ndarray:
    """C* [B, K, K]: `confusion_counts` of each resample of the labelled maps, the maps of
    resample b being `rows[b]` [N]."""
    index = {name: k for k, name in enumerate(classes)}
    k = len(classes)
    cell = np.array([index[a] * k + index[p] for a, p in zip(actual, predicted, strict=True)])
    offsets = np.arange(len(rows))[:, None] * k * k  # [B, 1]
    flat = np.bincount((cell[rows] + offsets).ravel(), minlength=len(rows) * k * k)
    return flat.reshape(len(rows), k, k).astype(float)


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
    false_positive_low: np.ndarray  # [K]: its exact 95% lower bound
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
    classes: Sequence[str],
    seed_change: float,
    resamples: int,
    seed: int,
) -> CorrectedShares:
    """Corrected shares of `classes` from the classifier's shares [K] with their 95%
    intervals [K], its cross-validated predictions on the labelled maps (`actual` by eye,
    `predicted` by the classifier) and the largest share change between two classifier
    seeds; intervals from `resamples` joint draws (module docstring) seeded by `seed`.

    Only identifiable types are solved for: a type that cannot be identified is left out
    of the system (taken as absent, its share NaN), since any share given to it would only
    echo its errors (with block in it, block takes most of the vertical maps)."""
    observed = np.asarray(observed, dtype=float)
    actual, predicted = np.asarray(actual), np.asarray(predicted)
    counts = confusion_counts(actual, predicted, classes)  # [K, K]
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(actual), (resamples, len(actual)))  # [B, N]
    drawn = drawn_counts(actual, predicted, classes, rows)  # [B, K, K]
    separations = separation(drawn)  # [B, K]
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
        rates = error_rates(counts)[known]  # [T, K]
        drawn_rates = np.stack(
            [rng.dirichlet(row + RATE_PRIOR, resamples) for row in counts[known]], axis=1
        )  # [B, T, K]: each type's row of rates, from its labelled maps
        shares = observed + rng.normal(0, spread, (resamples, len(classes)))  # [B, K]
        total = shares.sum(1, keepdims=True)  # [B, 1]
        composed = total[:, 0] > 0  # a draw with no positive total has no composition
        draws = unconstrained_shares(
            shares[composed] / total[composed], drawn_rates[composed]
        )  # [B', T]
        corrected[known] = adjusted_shares(observed, rates)
        if len(draws):
            low[known], high[known] = np.percentile(draws, [tail, 100 - tail], axis=0)
    recall, false_positive = recall_and_false_positive(counts)
    labelled = counts.sum(1)  # [K]
    wrongly_called = counts.sum(0) - np.diag(counts)  # [K]
    return CorrectedShares(
        classes=tuple(classes),
        raw=observed,
        corrected=corrected,
        ci_low=low,
        ci_high=high,
        separation=recall - false_positive,
        separation_low=separation_low,
        false_positive=false_positive,
        false_positive_low=exact_lower(wrongly_called, labelled.sum() - labelled),
        observed_high=np.asarray(observed_high, dtype=float),
        labelled=labelled,
        recalled=np.diag(counts),
    )
