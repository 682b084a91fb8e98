"""The `clark_syntax` config group's schema; its values are conf/clark_syntax/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import Measure

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class TreebankConfig:
    dir: Optional[str] = MISSING
    train_sentences: Optional[int] = bounded(least=1)
    dev_sentences: Optional[int] = bounded(least=1)
    measure: Measure = MISSING
    max_length: int = bounded(least=2)
    batch_size: int = MISSING
    max_offset: int = bounded(least=1)
    min_count: int = bounded(least=1)


@dataclass
class ProbeConfig:
    epochs: int = bounded(least=1)
    batch_size: int = MISSING
    learning_rate: float = bounded(above=0)
    word_vectors: Optional[str] = MISSING


@dataclass
class ClarkSyntaxConfig:
    ud: TreebankConfig = field(default_factory=TreebankConfig)
    probe: ProbeConfig = field(default_factory=ProbeConfig)
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("clark_syntax", ClarkSyntaxConfig)
