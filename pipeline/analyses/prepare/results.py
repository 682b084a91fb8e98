"""What the prepare stage writes that others read: each task's rows per split in its
source, before any cap (metrics/prepare.json, keys `<task>.<split>.source_rows`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import Covers, Family, Metrics, family

SOURCE_ROWS = ".source_rows"


def _source_rows(flat: Mapping[str, Any], place: str, stage: str) -> dict[tuple, float]:
    """(task, split) -> the split's rows in its source."""
    return {tuple(k.removesuffix(SOURCE_ROWS).split(".", 1)): float(v) for k, v in flat.items()
            if k.endswith(SOURCE_ROWS)}  # fmt: skip


@dataclass(frozen=True)
class PrepareMetrics(Metrics):
    stage = "prepare"
    covers = Covers.RUN

    # (task, split) -> rows
    source_rows: Family = field(metadata=family(_source_rows, "task split"))

    def dev_rows(self, task: str) -> float | None:
        """The rows of `task`'s evaluation split (the first by name that is not train)."""
        splits = sorted(s for t, s in self.source_rows if t == task and s != "train")
        return self.source_rows[(task, splits[0])] if splits else None
