"""The attention stores whose maps the pattern stages sample and classify."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.attention.store import AttentionStore


def open_stores(folder: Path, tasks: Sequence[str], model: str) -> dict[str, AttentionStore]:
    """task -> its attention store `folder/<task>.parquet`, checked to hold `model`'s maps."""
    return {task: AttentionStore(folder / f"{task}.parquet", expect_model=model) for task in tasks}
