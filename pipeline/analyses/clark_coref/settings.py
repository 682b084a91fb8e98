"""The `clark_coref` config group's schema; its values are conf/clark_coref/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class ClarkCorefConfig:
    dir: Optional[str] = MISSING
    select_examples: Optional[int] = bounded(least=1)
    report_examples: Optional[int] = bounded(least=1)
    max_length: int = bounded(least=2)
    batch_size: int = MISSING
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("clark_coref", ClarkCorefConfig)
