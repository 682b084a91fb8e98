"""What the analyses lend the claims engine beside their claims, found by scanning them: the
engine names no analysis.

Each analysis's claims module (`pipeline/analyses/<name>/claims.py`) declares `claims(scope)`
and may declare `PROVIDES`, a `Provides` of what the engine looks up:
- `learned`: the gate every claim about a fine-tuned model passes first, that its model
  learned its task (validity.learned, on what `LearnedGate.read` reads of a run), with
  synthetic results of a model that did or did not learn, for the claims' cases;
- `room`: what the headroom gate of a removal or pruning claim reads of a run
  (validity.headroom_failure);
- `units`: units a run scores that add claim rows of their own (`Scope.units`), by name;
- `dev_rows`: the whole dev set of a task, for the rows a claim would need;
- `tasks`: the tasks the registry declares every claim over.

`lent()` gathers them: a gate or reading is declared by one analysis only, a second fails
in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TypeVar

from pipeline import analyses
from pipeline.analyses import catalog
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.validity import Learning, Room
from pipeline.core.errors import PipelineError
from pipeline.core.results import Results

T = TypeVar("T")
PROVIDES = "PROVIDES"  # the name of a claims module's declaration


@dataclass(frozen=True)
class LearnedGate:
    """The learning gate's reading of a run, `read(out, task, seed)`, and `case(task, seed,
    learned)`: synthetic results under which `task`'s model of `seed` learned it (or not)."""

    read: Callable[[StageOutputs, str, int], Learning]
    case: Callable[[str, int, bool], dict[tuple, Results]]


@dataclass(frozen=True)
class Unit:
    """Units a run scores, each adding claim rows (e.g. UD relations): `name` keys them in
    `Scope.units` and names the registry's template row (`<name>`); `found` reads them off a
    run's outputs."""

    name: str
    found: Callable[[StageOutputs], tuple[str, ...]]

    def template(self) -> str:
        """The place-holder the registry declares its rows with, once."""
        return f"<{self.name}>"


@dataclass(frozen=True)
class Provides:
    """What one analysis lends the engine (module docstring), or all of them together
    (`lent`); None or empty: nothing."""

    learned: LearnedGate | None = None
    room: Callable[[StageOutputs, str, int], Room] | None = None
    units: tuple[Unit, ...] = ()
    dev_rows: Callable[[StageOutputs, str], float] | None = None
    tasks: tuple[str, ...] = ()


def claim_modules() -> dict[str, ModuleType]:
    """Each analysis's claims module (`pipeline/analyses/<name>/claims.py`), by analysis name,
    found by scanning the analyses (pipeline.analyses.names), in the report's section order
    (an analysis without a section after those with one, by name)."""
    found = {name: analyses.part(name, "claims") for name in analyses.names()}
    sections = list(catalog.sections())
    order = sorted(found, key=lambda n: (sections.index(n) if n in sections else len(sections), n))
    return {name: found[name] for name in order if found[name] is not None}


def provided() -> dict[str, Provides]:
    """Each analysis's `PROVIDES`, by analysis name (those that declare one)."""
    found = {name: getattr(module, PROVIDES, None) for name, module in claim_modules().items()}
    return {name: lent for name, lent in found.items() if lent is not None}


def _one(found: dict[str, T | None], what: str) -> T | None:
    """The one analysis's `what` (None where none declares it) of `found`, by analysis."""
    declared = [(name, value) for name, value in found.items() if value]
    if len(declared) > 1:
        raise PipelineError(
            f"claims: {what} is declared by {declared[0][0]} and {declared[1][0]} "
            "(PROVIDES of pipeline/analyses/<name>/claims.py); keep one"
        )
    return declared[0][1] if declared else None


def lent() -> Provides:
    """What the analyses lend together: each gate, reading and the registry's tasks from the
    one analysis that declares it, and every unit (two of one name fail in one line)."""
    found = provided()
    units = tuple(unit for lent in found.values() for unit in lent.units)
    names = [unit.name for unit in units]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise PipelineError(f"claims: unit {twice[0]} is declared twice in PROVIDES; rename one")
    return Provides(
        learned=_one({n: lent.learned for n, lent in found.items()}, "the learning gate"),
        room=_one({n: lent.room for n, lent in found.items()}, "the headroom gate's room"),
        units=units,
        dev_rows=_one({n: lent.dev_rows for n, lent in found.items()}, "a task's dev rows"),
        tasks=_one({n: lent.tasks for n, lent in found.items()}, "the registry's tasks") or (),
    )
