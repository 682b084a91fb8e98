"""Typed results between stages: what a stage writes, declared as a frozen dataclass that a
reader gets whole, by field, never by path or string key.

A results type knows its stage (`stage`) and what one run of it covers (`covers`: the run,
one fine-tuning seed, or one task and seed), so a reader names the type and the run:
`out.read(AblateMetrics, task, seed)` (pipeline/claims/outputs.py). Two kinds:

- `Metrics`, one flat metrics file (`<stage>[/<task>]/<seed|data set>.json`): each field
  read from its key (the field's name, or `field(metadata=key(...))`) by its type: a float,
  a string, an `Interval` (pipeline/core/stats.py, the type the writers write with
  `as_dict`: the key with `<key>_ci_low` and `<key>_ci_high`), optional where
  the type says `| None`; a family of keys the stage writes per task, kind or layer is a
  `Family`, parsed from the flat keys by a function the field names
  (`field(metadata=family(...))`).
- `Table`, one CSV table (`plots/<stage>/.../<name>.csv`): each field a column (pd.Series),
  its name the column's; a column the type declares and the file lacks fails when read.

A missing file, field or column fails in one line naming the file, the field and the
stage to rerun (`dvc repro <stage>`). The writers are untouched: the types only read.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.core.layout import seed_folder
from pipeline.core.stats import Interval

CI_SUFFIXES = ("_ci_low", "_ci_high")


class Covers(Enum):
    """What one run of a stage covers, and so what names its results."""

    RUN = ()
    SEED = ("seed",)
    TASK_SEED = ("task", "seed")

    def where(self, kind: type, args: tuple[str | int, ...]) -> tuple[str, ...]:
        """The folders under the stage's results that `args` (task, seed as this covers
        them) name; the wrong number of them fails in one line."""
        if len(args) != len(self.value):
            raise PipelineError(
                f"claims: {kind.__name__} is one per {' and '.join(self.value) or 'run'}: read "
                f"it with ({', '.join(self.value)}), not {args!r}"
            )
        pairs = zip(self.value, args, strict=True)
        return tuple(seed_folder(a) if n == "seed" else str(a) for n, a in pairs)


class Family(Mapping):
    """Results keyed by a name the stage chose (a task, a pattern type, a layer), read from
    one file; a name it lacks fails in one line naming the file, the family and the stage."""

    def __init__(self, entries: Mapping, place: str = "synthetic results", what: str = "entry",
                 stage: str = "") -> None:  # fmt: skip
        self._entries, self._place, self._what, self._stage = dict(entries), place, what, stage

    def __getitem__(self, name: Any) -> Any:
        if name not in self._entries:
            raise PipelineError(
                f"claims: {self._place} has no {self._what} `{name}`; "
                f"re-run `dvc repro {self._stage}` with the current code"
            )
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: Any, default: Any = None) -> Any:
        return self._entries.get(name, default)

    def __iter__(self) -> Iterator:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Family({self._entries!r})"


def key(name: str) -> dict[str, Any]:
    """The metadata of a metrics field read from key `name` (one that is no identifier, e.g.
    `cosine.L3`): `field(metadata=key("cosine.L3"))`."""
    return {"key": name}


def family(parse: Callable[[Mapping[str, Any], str, str], Mapping], what: str) -> dict[str, Any]:
    """The metadata of a metrics field parsed by `parse` (the flat file, the file's name and
    its stage, for errors) into a mapping of the names it finds (`what`: one entry in words,
    for errors): `field(metadata=family(parse, "task"))`."""
    return {"family": parse, "what": what}


def interval_at(flat: Mapping[str, Any], name: str) -> Interval:
    """The interval of key `name` of a flat file (a family's parser reads with this)."""
    return Interval(*(float(flat[name + s]) for s in ("", *CI_SUFFIXES)))


def interval_keys(flat: Mapping[str, Any]) -> Iterator[str]:
    """The keys of `flat` that carry an interval (those with a `<key>_ci_low`)."""
    return (k for k in flat if f"{k}_ci_low" in flat and f"{k}_ci_high" in flat)


def _optional(hint: Any) -> tuple[Any, bool]:
    """The type a hint names, and whether it allows None."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [a for a in typing.get_args(hint) if a is not type(None)]
        return kinds[0], len(kinds) < len(typing.get_args(hint))
    return hint, False


class Results:
    """What every results type declares: its stage and what one run of it covers."""

    stage: ClassVar[str]
    covers: ClassVar[Covers]


@dataclass(frozen=True)
class Record:
    """Typed fields read from flat keys under a prefix (module docstring): a whole metrics
    file (`Metrics`), or one entry of a family (a task's row of Table 1)."""

    @classmethod
    def parse(
        cls, flat: Mapping[str, Any], place: str = "synthetic results", stage: str = "",
        prefix: str = "",
    ) -> Self:  # fmt: skip
        """The fields of `flat` (a file's keys and values), each under `prefix`; `place`
        (the file) and `stage` (the one that writes it) name them in errors."""
        hints = typing.get_type_hints(cls)
        values = {}
        for f in dataclasses.fields(cls):
            if "family" in f.metadata:
                entries = f.metadata["family"](flat, place, stage)
                values[f.name] = Family(entries, place, f.metadata["what"], stage)
                continue
            name = prefix + f.metadata.get("key", f.name)
            kind, optional = _optional(hints[f.name])
            needed = [name, *(name + s for s in CI_SUFFIXES)] if kind is Interval else [name]
            absent = [k for k in needed if k not in flat]
            if absent and optional:
                values[f.name] = None
            elif absent:
                raise PipelineError(
                    f"claims: {place} has no `{absent[0]}` ({cls.__name__}.{f.name}); "
                    f"re-run `dvc repro {stage}` with the current code"
                )
            elif kind is Interval:
                values[f.name] = interval_at(flat, name)
            else:
                values[f.name] = kind(flat[name])
        return cls(**values)


@dataclass(frozen=True)
class Metrics(Record, Results):
    """One flat metrics file of a stage, by typed field (module docstring)."""

    @classmethod
    def read(cls, flat: Mapping[str, Any], place: str = "synthetic results") -> Self:
        """The file's fields (`flat`: its keys and values; `place`: the file, for errors)."""
        return cls.parse(flat, place, cls.stage)


@dataclass(frozen=True, eq=False)
class Table(Results):
    """One CSV table of a stage, by typed column (module docstring): each field a column of
    that name, optional (None when absent) where its type says `| None`."""

    name: ClassVar[str]  # the file's name without `.csv`

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, place: str = "synthetic results") -> Self:
        """The declared columns of `frame` (`place`: the file, for errors)."""
        hints = typing.get_type_hints(cls)
        values = {}
        for column in cls.columns():
            if column in frame:
                values[column] = frame[column]
            elif _optional(hints[column])[1]:
                values[column] = None
            else:
                raise PipelineError(
                    f"claims: {place} has no column `{column}` ({cls.__name__}); "
                    f"re-run `dvc repro {cls.stage}` with the current code"
                )
        return cls(**values)

    @classmethod
    def of(cls, **columns: Any) -> Self:
        """A table from its columns as sequences (synthetic results)."""
        return cls.from_frame(pd.DataFrame(columns))

    def frame(self) -> pd.DataFrame:
        """The declared columns (those present) as one frame, in declared order."""
        present = {c: getattr(self, c) for c in self.columns() if getattr(self, c) is not None}
        return pd.DataFrame(present)

    def where(self, keep: pd.Series | np.ndarray) -> Self:
        """The rows where `keep` (bool per row) holds."""
        return type(self).from_frame(self.frame()[np.asarray(keep, dtype=bool)])

    def __len__(self) -> int:
        return len(getattr(self, self.columns()[0]))
