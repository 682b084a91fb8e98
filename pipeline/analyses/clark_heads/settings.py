"""The `clark_heads` config group's schema; its values are conf/clark_heads/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import Measure, Variant

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class Behaviour:
    focus: float = MISSING
    broad: float = MISSING


@dataclass
class ClarkHeadsConfig:
    variant: Variant = MISSING
    measure: Measure = MISSING
    num_examples: Optional[int] = bounded(least=1)
    punctuation: list[str] = MISSING
    behaviour: Behaviour = field(default_factory=Behaviour)
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("clark_heads", ClarkHeadsConfig)
