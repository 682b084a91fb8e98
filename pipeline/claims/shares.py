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
- the labelled maps (with replacement), so R* carries the cross-validation's own error
  (folds' training and the finite labelled set);
- the observed shares q*, normal around q with each share's standard error read off its 95%
  interval over examples, plus the classifier's seed spread (two ensembles of different
  seeds differ by at most `seed_change` on any share; taken as the spread of one seed's
  share, sd = seed_change / √2, for every type: conservative, since it is a maximum).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from pipeline.claims.thresholds import CONFIDENCE, Z_CONFIDENCE

SUM_WEIGHT = 1e3  # weight of the Σ p = 1 row in the least-squares system
SHARE_RESAMPLES = 1000  # joint draws behind each corrected share's interval


def error_rates(
    actual: Sequence[str], predicted: Sequence[str], classes: Sequence[str]
) -> np.ndarray:
    """R [K, K]: R[i, j] = share of maps labelled classes[i] that the classifier called
    classes[j]; a type with no labelled map gets a row of NaN."""
    index = {name: k for k, name in enumerate(classes)}
    counts = np.zeros((len(classes), len(classes)))
    np.add.at(counts, ([index[a] for a in actual], [index[p] for p in predicted]), 1)
    totals = counts.sum(1, keepdims=True)  # [K, 1]
    with np.errstate(invalid="ignore"):
        return counts / totals


def adjusted_shares(observed: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """True shares p [T] of T types from the classifier's shares `observed` [K] of its K
    labels and the types' error rates `rates` [T, K] (T <= K: the types solved for):
    argmin ‖ratesᵀ p - observed‖ over p >= 0 with Σ p = 1."""
    system = np.vstack([rates.T, SUM_WEIGHT * np.ones(len(rates))])  # [K + 1, T]
    target = np.append(observed, SUM_WEIGHT)  # [K + 1]
    shares, _ = nnls(system, target)
    return shares / shares.sum()


def recall_and_false_positive(
    rates: np.ndarray, labelled: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per type [K] each, from error rates [K, K] and the labelled maps per type [K]: the
    share of its maps called that type (recall), and the share of the other types' labelled
    maps (pooled) called that type (false-positive rate)."""
    called = rates * labelled[:, None]  # [K, K]: counts
    others = labelled.sum() - labelled  # [K]
    return np.diag(rates), (called.sum(0) - np.diag(called)) / others


def separation(rates: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """recall - false-positive rate per type [K]: how much more often a type's maps are
    called that type than other types' maps are."""
    recall, false_positive = recall_and_false_positive(rates, labelled)
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
    labelled: np.ndarray  # [K]
    recalled: np.ndarray  # [K]

    @property
    def identifiable(self) -> np.ndarray:
        """bool [K]: the 95% lower bound of recall - false-positive rate is above 0."""
        return self.separation_low > 0

    def unresolved(self) -> list[str]:
        """Identifiable types whose corrected share's interval reaches 0."""
        return [c for c, low in zip(self.classes, self.ci_low, strict=True) if low <= 0]


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
    labelled = np.array([(actual == c).sum() for c in classes], dtype=float)  # [K]
    if (labelled == 0).any():
        missing = [c for c, n in zip(classes, labelled, strict=True) if n == 0]
        raise ValueError(f"no labelled map of type {', '.join(missing)}")
    rates = error_rates(actual, predicted, classes)  # [K, K]
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(actual), (resamples, len(actual)))  # [B, N]
    drawn_rates = np.stack([error_rates(actual[r], predicted[r], classes) for r in rows])
    absent = np.isnan(drawn_rates).any(-1)  # [B, K]: a type not drawn keeps its full rates
    drawn_rates[absent] = np.broadcast_to(rates, drawn_rates.shape)[absent]
    drawn_labelled = np.stack([[(actual[r] == c).sum() for c in classes] for r in rows])
    drawn_labelled = np.where(absent, labelled, drawn_labelled).astype(float)  # [B, K]
    separations = np.stack(
        [separation(m, n) for m, n in zip(drawn_rates, drawn_labelled, strict=True)]
    )  # [B, K]
    tail = (1 - CONFIDENCE) / 2 * 100
    known = np.percentile(separations, tail, axis=0) > 0  # [K]
    spread = np.hypot(
        (np.asarray(observed_high) - np.asarray(observed_low)) / (2 * Z_CONFIDENCE),
        seed_change / np.sqrt(2),
    )  # [K]
    draws = []
    for drawn in drawn_rates:
        shares = (observed + rng.normal(0, spread)).clip(min=0)  # [K]
        draws.append(adjusted_shares(shares / shares.sum(), drawn[known]))
    low, high = np.full((2, len(classes)), np.nan)
    low[known], high[known] = np.percentile(np.array(draws), [tail, 100 - tail], axis=0)
    corrected = np.full(len(classes), np.nan)
    corrected[known] = adjusted_shares(observed, rates[known])
    recall, false_positive = recall_and_false_positive(rates, labelled)
    return CorrectedShares(
        classes=tuple(classes),
        raw=observed,
        corrected=corrected,
        ci_low=low,
        ci_high=high,
        separation=recall - false_positive,
        separation_low=np.percentile(separations, tail, axis=0),
        false_positive=false_positive,
        labelled=labelled,
        recalled=recall * labelled,
    )
