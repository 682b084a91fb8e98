"""The bounds of numeric settings, declared next to their fields and checked when conf/ is
composed.

A schema field declares its bound with `bounded(...)` (`epochs: int = bounded(least=1)`) in
place of `= MISSING`; every setting whose name ends in `batch_size`, in any group, is at least
1 (`BATCH_SIZE`). `check_bounds` walks a composed config against its schema dataclass and
fails on the first value out of bounds in one line naming the key, the value and the fix
(`finetune.epochs=0: must be at least 1; set finetune.epochs=1 or more`). A bound holds for
each value of a dict or list field (`finetune.epochs_by_task.rte`) and lets an Optional
field's null through (null means "all" there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import Field, dataclass, field, fields, is_dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from omegaconf import MISSING
from omegaconf.errors import MissingMandatoryValue

from pipeline.core.errors import PipelineError

_KEY = "bound"  # the key of a field's bound in its metadata


@dataclass(frozen=True)
class Bound:
    """A number's bounds: at least `least`, more than `above`, at most `most` (None: open)."""

    least: float | None = None
    above: float | None = None
    most: float | None = None

    def fault(self, key: str, value: float) -> str | None:
        """The one-line complaint about `value` at `key`, or None when it is in bounds."""
        if (
            (self.least is None or value >= self.least)
            and (self.above is None or value > self.above)
            and (self.most is None or value <= self.most)
        ):
            return None
        parts = {"at least": self.least, "more than": self.above, "at most": self.most}
        rule = " and ".join(f"{word} {limit}" for word, limit in parts.items() if limit is not None)
        if rule == f"at least {self.least}":
            fix = f"{key}={self.least} or more"
        elif rule == f"at most {self.most}":
            fix = f"{key}={self.most} or less"
        else:
            fix = f"{key} to a value {rule}"
        return f"{key}={value}: must be {rule}; set {fix}"


# every `*batch_size` setting of every group: a batch holds at least one row
BATCH_SIZE = Bound(least=1)


def bounded(
    *, least: float | None = None, above: float | None = None, most: float | None = None
) -> Any:
    """A schema field without a value (its value lives in conf/) that must lie in these bounds:
    `field(default=MISSING)` with the bound in its metadata."""
    return field(default=MISSING, metadata={_KEY: Bound(least=least, above=above, most=most)})


def _bound_of(declared: Field[Any]) -> Bound | None:
    """The bound a schema field declares, or the batch sizes' one by its name."""
    if _KEY in declared.metadata:
        return declared.metadata[_KEY]
    return BATCH_SIZE if declared.name.endswith("batch_size") else None


def _values(key: str, value: Any) -> list[tuple[str, Any]]:
    """(key, number) for a setting's value: itself, or each item of a dict or list."""
    if isinstance(value, Mapping):
        return [(f"{key}.{name}", item) for name, item in value.items()]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [(f"{key}[{index}]", item) for index, item in enumerate(value)]
    return [(key, value)]


def _held(hint: Any) -> type | None:
    """The dataclass a field's type hint holds (itself, Optional, or a dict's values), or None."""
    if is_dataclass(hint):
        return hint
    if get_origin(hint) in (Union, UnionType, dict):
        return next(filter(None, (_held(arg) for arg in get_args(hint))), None)
    return None


def check_bounds(node: Mapping[str, Any], schema: type, prefix: str = "") -> None:
    """Fail in one line on the first value of `node` (a config composed with `schema`, a
    dataclass) outside its field's bound; nested dataclasses (and dicts of them, item by item)
    are walked."""
    hints = get_type_hints(schema)
    for declared in fields(schema):
        key, held, bound = f"{prefix}{declared.name}", _held(hints[declared.name]), None
        if held is None and (bound := _bound_of(declared)) is None:
            continue  # unread: an unbounded value may be this check's own interpolation
        try:
            value = node[declared.name]
        except MissingMandatoryValue:
            continue  # no value to bound: reading it names the key where it is needed
        if value is None:
            continue
        if held is not None and get_origin(hints[declared.name]) is dict:
            for name, item in value.items():
                check_bounds(item, held, f"{key}.{name}.")
        elif held is not None:
            check_bounds(value, held, f"{key}.")
        else:
            for item_key, item in _values(key, value):
                fault = None if item is None else bound.fault(item_key, item)
                if fault:
                    raise PipelineError(fault)
