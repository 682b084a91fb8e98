"""What the table1 stage writes that others read: per fine-tuning seed, each task's row of
Kovaleva et al.'s Table 1 (metrics/table1/seed<N>.json, keys `<task>.<field>`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pipeline.core.results import Covers, Family, Metrics, Record, family
from pipeline.core.stats import Interval

R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class TaskRow(Record):
    """One task's main metric on its dev rows, and the paired differences Table 1 reads."""

    finetuned: Interval
    finetuned_minus_chance: Interval
    finetuned_minus_pretrained: Interval
    finetuned_minus_random_init: Interval
    chance: float
    pretrained: float
    examples: float | None = None  # the dev rows scored (older runs lack it)


def _per_task(row: type[R]) -> Callable[[Mapping[str, Any], str, str], dict[str, R]]:
    """A family's parser: one `row` per task the file scores (`<task>.finetuned` keys)."""

    def parse(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, R]:
        tasks = dict.fromkeys(k.split(".")[0] for k in flat if k.endswith(".finetuned"))
        return {t: row.parse(flat, place, stage, prefix=f"{t}.") for t in tasks}

    return parse


@dataclass(frozen=True)
class Table1Metrics(Metrics):
    stage = "table1"
    covers = Covers.SEED

    tasks: Family = field(metadata=family(_per_task(TaskRow), "task"))  # task -> TaskRow


@dataclass(frozen=True)
class ScoresRow(Record):
    """One task's main metric on its dev rows without fine-tuning, fine-tuned from random
    weights and fine-tuned from the pre-trained ones, each with its interval; the chance
    score and the dev rows scored."""

    pretrained: Interval
    random_init: Interval
    finetuned: Interval
    chance: float
    examples: float


@dataclass(frozen=True)
class Table1Scores(Metrics):
    """The same file's scores set beside the paper's (the docs' table, table1's blocks.py)."""

    stage = "table1"
    covers = Covers.SEED

    tasks: Family = field(metadata=family(_per_task(ScoresRow), "task"))  # task -> ScoresRow
