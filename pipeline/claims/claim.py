"""One testable finding: what it says, where the papers say it, how it is measured and the
rule that turns the measurement into a verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Measured, Rule


@dataclass(frozen=True)
class Claim:
    name: str  # flat metrics prefix: <paper>.<finding>[.<task>...]
    source: str  # the paper and the place, e.g. "Kovaleva et al. 2019, Table 1"
    finding: str  # the finding, in words
    statistic: str  # what is measured, in words
    rule: Rule
    measure: Callable[[StageOutputs], Measured]
