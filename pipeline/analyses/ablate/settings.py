"""The `ablate` config group's schema; its values are conf/ablate/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import DisableMode, ImportanceSplit

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class AblateConfig:
    num_examples: Optional[int] = bounded(least=1)
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


SETTINGS = Settings("ablate", AblateConfig)
