"""Which pattern types a task's inputs can show: a map of a single sentence is never block,
which needs two sentences (Kovaleva et al. Sec. 4.1; the labelling guide)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from pipeline.core.schema import load_task
from pipeline.kovaleva.patterns import CLASSES

PAIR_ONLY = ("block",)  # the types only a two-sentence input can show


@cache
def one_sentence(task: str) -> bool:
    """Whether `task`'s inputs are single sentences (one text column)."""
    return len(load_task(task).text_columns) == 1


def input_types(task: str) -> tuple[str, ...]:
    """The pattern types `task`'s inputs can show: the five, less block on a one-sentence
    task (registry version 2, pipeline/claims/amendments.yaml)."""
    return tuple(k for k in CLASSES if not (k in PAIR_ONLY and one_sentence(task)))


def impossible_types(tasks: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """task -> the types its maps cannot be, for the tasks of `tasks` that have any."""
    return {t: PAIR_ONLY for t in tasks if one_sentence(t)}
