"""The `gates` config group's schema; its values are conf/gates/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class GatesConfig:
    num_examples: Optional[int] = MISSING  # dev rows evaluated (= ablate.num_examples: same rows)
    train_examples: Optional[int] = MISSING  # train rows the gates are fitted on
    batch_size: int = MISSING
    steps: int = MISSING  # optimiser steps per lambda
    learning_rate: float = MISSING
    init_log_alpha: float = MISSING
    lambdas: list[float] = MISSING


SETTINGS = Settings("gates", GatesConfig)
