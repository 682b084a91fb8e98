"""The `measures` config group's schema; its values are conf/measures/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import Measure

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class MeasuresConfig:
    num_examples: Optional[int] = bounded(least=1)
    batch_size: int = MISSING
    measures: list[Measure] = MISSING
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("measures", MeasuresConfig)
