"""What the table1 stage writes that others read: per fine-tuning seed, each task's row of
Kovaleva et al.'s Table 1 (metrics/table1/seed<N>.json, keys `<task>.<field>`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import Covers, Family, Metrics, Record, family
from pipeline.core.stats import Interval


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


def _rows(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, TaskRow]:
    tasks = dict.fromkeys(k.split(".")[0] for k in flat if k.endswith(".finetuned"))
    return {t: TaskRow.parse(flat, place, stage, prefix=f"{t}.") for t in tasks}


@dataclass(frozen=True)
class Table1Metrics(Metrics):
    stage = "table1"
    covers = Covers.SEED

    tasks: Family = field(metadata=family(_rows, "task"))  # task -> TaskRow


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


def _scores(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, ScoresRow]:
    tasks = dict.fromkeys(k.split(".")[0] for k in flat if k.endswith(".finetuned"))
    return {t: ScoresRow.parse(flat, place, stage, prefix=f"{t}.") for t in tasks}


@dataclass(frozen=True)
class Table1Scores(Metrics):
    """The same file's scores set beside the paper's (the docs' table, table1's blocks.py)."""

    stage = "table1"
    covers = Covers.SEED

    tasks: Family = field(metadata=family(_scores, "task"))  # task -> ScoresRow
