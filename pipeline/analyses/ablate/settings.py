"""The `ablate` config group's schema; its values are conf/ablate/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import DisableMode, ImportanceSplit, Task

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class AblateConfig:
    num_examples: Optional[int] = bounded(least=1)  # dev rows (null: all), every task...
    # ... but these: task -> its dev rows in place of `num_examples` (null: all)
    num_examples_by_task: dict[Task, Optional[int]] = bounded(least=1)
    mode: DisableMode = MISSING
    batch_size: int = MISSING
    ablations_per_pass: int = bounded(least=1)
    cache_budget_mb: int = MISSING
    importance_split: ImportanceSplit = MISSING
    importance_examples: Optional[int] = bounded(least=1)
    prune_step: float = MISSING
    prune_keep: float = MISSING
    bootstrap_resamples: int = MISSING
    permutation_resamples: int = MISSING

    def rows(self, task: str) -> Optional[int]:
        """The dev rows `task`'s sweeps (and the gates, on the same rows) evaluate: its own
        count where `num_examples_by_task` names it, else `num_examples` (None: all)."""
        counts = {str(name): count for name, count in self.num_examples_by_task.items()}
        return counts.get(task, self.num_examples)


SETTINGS = Settings("ablate", AblateConfig)
