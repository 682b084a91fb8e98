"""The `prepare` config group's schema; its values are conf/prepare/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import GlueSource, Task

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class RowFloor:
    # rows a task keeps at least of its train split (null: no floor)
    train: Optional[int] = bounded(least=1)
    eval: Optional[int] = bounded(least=1)


@dataclass
class PrepareConfig:
    source: GlueSource = MISSING
    max_train_rows: Optional[int] = bounded(least=1)  # null: every row
    max_eval_rows: Optional[int] = bounded(least=1)
    min_rows: dict[Task, RowFloor] = MISSING  # per task, above the limits

    def row_limit(self, task: str, split: str) -> Optional[int]:
        """The most rows `task` keeps of `split`: the common limit, raised to the task's
        floor (None: every row)."""
        train = split == "train"
        limit = self.max_train_rows if train else self.max_eval_rows
        floor = {str(name): rows for name, rows in self.min_rows.items()}.get(task)
        least = None if floor is None else (floor.train if train else floor.eval)
        return limit if limit is None or least is None else max(limit, least)


SETTINGS = Settings("prepare", PrepareConfig)
