"""One testable finding: what the paper says and where, the number it prints, how this run
measures it, and the rule that turns the measurement into a verdict; and what an analysis's
claims are declared for (`Scope`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate


@dataclass(frozen=True)
class Scope:
    """What an analysis's claims are declared for: the run's tasks, and by unit name the
    units the run scored that add rows of their own (provides.Unit: e.g. UD relations)."""

    tasks: tuple[str, ...]
    units: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def of(self, unit: str) -> tuple[str, ...]:
        """The units of name `unit` the run scored (none where it names none)."""
        return tuple(self.units.get(unit, ()))


@dataclass(frozen=True)
class Source:
    """Where a finding comes from (`../shared/papers/published-numbers.md` has them all)."""

    paper: str  # e.g. "Kovaleva et al. 2019"
    where: str  # section, table or figure, e.g. "Sec. 3, Table 1"
    statement: str  # the paper's statement, paraphrased
    number: float | None = None  # the paper's value of the claim's statistic (bert-base)
    number_note: str = ""  # how that number reads off the paper
    unit: float | None = None  # one unit of `number`'s last printed digit, on its scale

    def __post_init__(self) -> None:
        if self.number is not None and not (self.unit and self.unit > 0):
            raise ValueError(
                f"{self.cite()}: a printed number needs `unit`, one unit of its last printed "
                "digit (0.001 for a percentage printed to one decimal)"
            )

    def cite(self) -> str:
        return f"{self.paper}, {self.where}"


@dataclass(frozen=True)
class Claim:
    """A paper's finding (`extension=False`), or the project's own test built on a paper's
    statement (`extension=True`: reported apart, never counted among the papers' findings).

    `finetuned`: the tasks whose fine-tuned models the statistic reads. Such a claim can
    differ between fine-tuning seeds (it is evaluated per seed and over seeds), and is tested
    only on seeds whose models learned those tasks, unless `gated` is False (Table 1's claim,
    which is about learning itself).

    `effect`: the effect the power check looks for, as a distance from the threshold on the
    claim's side (None: no power check). `effect_source` says where it comes from: empty
    when it is the paper's own printed number for this quantity (`source.number`), else
    e.g. "assumed: MRPC's +1.2" or "this project's margin". `headroom`: for a claim about
    removing or pruning heads, the least the model must clear chance by on the ablation rows
    themselves (lower 95% bound of the baseline's margin) for the claim to be testable; a
    model with less than that has nothing to lose (None: no such check). `reading`: see
    pipeline/claims/readings.py."""

    name: str  # flat metrics prefix: <paper>.<finding>[.<task>...]
    source: Source
    finding: str  # the finding as tested here, in words
    statistic: str  # what is measured, in words
    rule: Beyond
    # (the stages' typed results, fine-tuning seed): reads them by `out.read(Type, ...)`
    measure: Callable[[StageOutputs, int], Estimate]
    finetuned: tuple[str, ...] = ()
    gated: bool = True
    effect: float | None = None
    extension: bool = False
    effect_source: str = ""
    headroom: float | None = None
    # one reading of a paper sentence that admits several (readings.py): the last part of
    # `name`; the finding, `name` without it, gets one row of its own judged from its readings
    reading: str = ""

    def __post_init__(self) -> None:
        if self.reading and not self.name.endswith(f".{self.reading}"):
            raise ValueError(f"{self.name}: a reading's name ends in its reading .{self.reading}")
