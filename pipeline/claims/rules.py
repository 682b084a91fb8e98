"""Verdicts from a statistic and its 95% interval.

A claim is `supported` when the whole interval lies on the claimed side of the rule's
threshold, `contradicted` when it lies wholly on the other side, and `inconclusive` when it
straddles the threshold. Two verdicts say why no test was made: `underpowered` (the
interval straddles the threshold, and the smallest effect this sample could detect is larger
than the effect the paper reports, so the sample size decided the outcome in advance) and
`not testable` (a fine-tuned model the claim reads did not learn its task, or the statistic
is undefined on this run); the table gives the reason beside each. A claim judged on several
fine-tuning seeds is `seed-dependent` when one seed's interval supports it and another's
contradicts it (pipeline/claims/evaluate.py).

No interval decides a claim when it has no width, or when its statistic says it cannot be
placed against the threshold (`Estimate.unresolved`, e.g. every seed's interval collapsed,
pipeline/claims/seeds.py): `settle` turns such a `supported` or `contradicted` into
`inconclusive` with the reason, for every claim (evaluate.py judges through it). A
zero-width interval is a statistic collapsed at a boundary, not a measurement without
error.

An estimate lies inside its own interval (`Estimate.inside`): the statistic and its interval
are one quantity, never a clipped estimate beside unclipped draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pipeline.claims.thresholds import Z_CONFIDENCE, Z_POWER, Threshold
from pipeline.core.stats import Interval

Verdict = Literal[
    "supported",
    "contradicted",
    "inconclusive",
    "underpowered",
    "not testable",
    "seed-dependent",
    "reading-dependent",
]
VERDICTS: tuple[Verdict, ...] = (
    "supported",
    "contradicted",
    "inconclusive",
    "underpowered",
    "not testable",
    "seed-dependent",  # one seed's model supports the claim and another's contradicts it
    "reading-dependent",  # one reading of the paper's sentence supported, another contradicted
)


@dataclass(frozen=True)
class Estimate:
    """A claim's statistic on the full data and its 95% interval. `critical`: the interval's
    half-width in standard errors (1.96 for a plain 95% interval; more for a simultaneous
    interval over many units). All three numbers NaN: the statistic is undefined on this run,
    `note` says why. `unresolved`: why the interval cannot decide the claim, whatever it
    is ('' when it can; `settle`)."""

    statistic: float
    ci_low: float
    ci_high: float
    critical: float = Z_CONFIDENCE
    note: str = ""
    evidence: dict[str, float] = field(default_factory=dict)
    unresolved: str = ""

    def __post_init__(self) -> None:
        values = (self.statistic, self.ci_low, self.ci_high)
        if self.undefined:
            return
        if any(math.isnan(v) for v in values) or not self.ci_low <= self.ci_high:
            raise ValueError(f"not a statistic with an interval: {values}")

    @classmethod
    def of(cls, interval: Interval) -> Estimate:
        """A stage's statistic with its 95% interval (typed results, pipeline/core/results.py)."""
        return cls(interval.estimate, interval.low, interval.high)

    @property
    def undefined(self) -> bool:
        return all(math.isnan(v) for v in (self.statistic, self.ci_low, self.ci_high))

    @property
    def inside(self) -> bool:
        """The estimate lies within its interval (an undefined statistic trivially does)."""
        return self.undefined or self.ci_low <= self.statistic <= self.ci_high

    @property
    def detectable(self) -> float:
        """The smallest distance from the threshold that this interval's width finds with
        probability POWER: (critical + z_power) standard errors, the standard error read
        off the interval's width."""
        standard_error = (self.ci_high - self.ci_low) / (2 * self.critical)
        return standard_error * (self.critical + Z_POWER)


def undefined(note: str) -> Estimate:
    """A statistic this run cannot compute, and why."""
    return Estimate(math.nan, math.nan, math.nan, note=note)


FIELDS = ("statistic", "ci_low", "ci_high")


@dataclass(frozen=True)
class Beyond:
    """Supported when the interval lies entirely above `threshold` (side `above`) or
    entirely below it (side `below`); contradicted when it lies entirely on the other side."""

    threshold: Threshold
    side: Literal["above", "below"] = "above"
    bound: float | None = None  # the largest value the statistic can take (1 for a share)

    def __call__(self, measured: Estimate) -> Verdict:
        if measured.undefined:
            return "not testable"
        value = self.threshold.value
        above, below = measured.ci_low > value, measured.ci_high < value
        if self.side == "below":
            above, below = below, above
        return "supported" if above else "contradicted" if below else "inconclusive"

    def scaled(self, factor: float) -> Beyond:
        """The same rule at `factor` times the threshold (the sensitivity columns); see
        `decided_in_advance` for a scaled threshold the statistic cannot pass."""
        return replace(self, threshold=replace(self.threshold, value=self.threshold.value * factor))

    def decided_in_advance(self) -> bool:
        """A threshold at or beyond the statistic's `bound` cannot be passed (side above) or
        cannot be missed (side below): the verdict there says nothing about the data
        (doubling "more than half" gives 1)."""
        return self.bound is not None and self.threshold.value >= self.bound

    def describe(self) -> str:
        low, high = ("ci_low", "ci_high") if self.side == "above" else ("ci_high", "ci_low")
        other = "<" if self.side == "above" else ">"
        claimed = ">" if self.side == "above" else "<"
        t = f"{self.threshold.value:g}"
        return f"supported if {low} {claimed} {t}; contradicted if {high} {other} {t}"


ZERO_WIDTH = (
    "the interval has no width: the statistic collapsed at a boundary, which is not a "
    "measurement without error"
)


def settle(verdict: Verdict, measured: Estimate) -> tuple[Verdict, str]:
    """A rule's verdict on `measured` and why it was withheld ('' when it stands): a
    decided verdict becomes `inconclusive` on a zero-width interval or an unresolved
    statistic (module docstring)."""
    if verdict not in ("supported", "contradicted"):
        return verdict, ""
    if measured.unresolved:
        return "inconclusive", measured.unresolved
    if measured.ci_high <= measured.ci_low:
        return "inconclusive", ZERO_WIDTH
    return verdict, ""


def smallest(*measured: Estimate) -> Estimate:
    """The weakest of several statistics that must all clear the same threshold: the
    minimum of the statistics and of each bound. Beyond(t) on it says `supported` exactly
    when every interval lies above t and `contradicted` when any lies below t. Undefined
    if any of them is."""
    return _bound_wise(min, measured)


def _bound_wise(pick: Callable[..., float], measured: Sequence[Estimate]) -> Estimate:
    """`pick` (min or max) of the statistics and of each bound, separately."""
    for m in measured:
        if m.undefined:
            return m
    return Estimate(*(pick(getattr(m, f) for m in measured) for f in FIELDS))
