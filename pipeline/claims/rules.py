"""Verdicts from a statistic and its 95% interval.

A claim is `supported` when the whole interval lies on the claimed side of the rule's
threshold, `contradicted` when the whole interval lies on the other side, and `inconclusive`
when the interval straddles it: at this sample size the data cannot tell.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Verdict = Literal["supported", "contradicted", "inconclusive"]
VERDICTS: tuple[Verdict, ...] = ("supported", "contradicted", "inconclusive")


@dataclass(frozen=True)
class Measured:
    """A claim's statistic on the full data, its 95% interval, and any counts its rule
    reads besides (e.g. how many heads are significant). All three NaN: the statistic is
    undefined on this run (e.g. a share among maps of a type the run has none of), and
    every rule calls it `inconclusive`."""

    statistic: float
    ci_low: float
    ci_high: float
    evidence: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        values = (self.statistic, self.ci_low, self.ci_high)
        if self.undefined:
            return
        if any(math.isnan(v) for v in values) or not self.ci_low <= self.ci_high:
            raise ValueError(f"not a statistic with an interval: {values}")

    @property
    def undefined(self) -> bool:
        return all(math.isnan(v) for v in (self.statistic, self.ci_low, self.ci_high))


UNDEFINED = Measured(math.nan, math.nan, math.nan)
FIELDS = ("statistic", "ci_low", "ci_high")


@dataclass(frozen=True)
class Beyond:
    """Supported when the interval lies entirely above `threshold` (side `above`) or
    entirely below it (side `below`); contradicted when it lies entirely on the other side."""

    threshold: float
    side: Literal["above", "below"] = "above"

    def __call__(self, measured: Measured) -> Verdict:
        if measured.undefined:
            return "inconclusive"
        above = measured.ci_low > self.threshold
        below = measured.ci_high < self.threshold
        if self.side == "below":
            above, below = below, above
        return "supported" if above else "contradicted" if below else "inconclusive"

    def describe(self) -> str:
        low, high = ("ci_low", "ci_high") if self.side == "above" else ("ci_high", "ci_low")
        other = "<" if self.side == "above" else ">"
        claimed = ">" if self.side == "above" else "<"
        t = f"{self.threshold:g}"
        return f"supported if {low} {claimed} {t}; contradicted if {high} {other} {t}"


@dataclass(frozen=True)
class SomeSignificant:
    """For "some of many units have a positive effect": supported when at least one unit's
    effect is positive with q < 0.05 (Benjamini-Hochberg over the units, evidence
    `significant`); contradicted when no unit's own interval reaches above 0 (evidence
    `max_ci_high` <= 0), so no unit plausibly has a positive effect."""

    def __call__(self, measured: Measured) -> Verdict:
        if measured.undefined:
            return "inconclusive"
        if measured.evidence["significant"] >= 1:
            return "supported"
        return "contradicted" if measured.evidence["max_ci_high"] <= 0 else "inconclusive"

    def describe(self) -> str:
        return (
            "supported if >= 1 unit helps with q < 0.05 (BH); "
            "contradicted if every unit's ci_high <= 0"
        )


Rule = Beyond | SomeSignificant


def smallest(*measured: Measured) -> Measured:
    """The weakest of several statistics that must all clear the same threshold: the
    minimum of the statistics and of each bound. Beyond(t) on it says `supported` exactly
    when every interval lies above t and `contradicted` when any lies below t. Undefined
    if any of them is."""
    return _bound_wise(min, measured)


def largest(*measured: Measured) -> Measured:
    """The strongest of several statistics that must all stay below the same threshold: the
    maximum of the statistics and of each bound. Beyond(t, side="below") on it says
    `supported` exactly when every interval lies below t and `contradicted` when any lies
    above t. Undefined if any of them is."""
    return _bound_wise(max, measured)


def _bound_wise(pick: Callable[..., float], measured: Sequence[Measured]) -> Measured:
    """`pick` (min or max) of the statistics and of each bound, separately."""
    if any(m.undefined for m in measured):
        return UNDEFINED
    return Measured(*(pick(getattr(m, f) for m in measured) for f in FIELDS))
