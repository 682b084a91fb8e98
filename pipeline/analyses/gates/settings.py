"""The `gates` config group's schema; its values are conf/gates/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class GatesConfig:
    train_examples: Optional[int] = bounded(least=1)  # train rows the gates are fitted on
    batch_size: int = MISSING
    steps: int = bounded(least=1)  # optimiser steps per lambda
    learning_rate: float = bounded(above=0)
    init_log_alpha: float = MISSING
    lambdas: list[float] = MISSING


SETTINGS = Settings("gates", GatesConfig)
