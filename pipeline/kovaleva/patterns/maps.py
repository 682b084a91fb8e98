"""The attention stores whose maps the pattern stages sample and classify."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.attention.store import AttentionStore, store_path


def open_stores(
    root: Path, tasks: Sequence[str], model: str, seed: int
) -> dict[str, AttentionStore]:
    """task -> its attention store under `root` for fine-tuning seed `seed`
    (`store_path`), checked to hold `model`'s maps."""
    return {
        task: AttentionStore(store_path(root, task, seed), expect_model=model) for task in tasks
    }
