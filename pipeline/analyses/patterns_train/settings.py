"""The `patterns` config group's schema; its values are conf/patterns/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import PatternClass, Variant

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class PatternSample:
    variants: list[Variant] = MISSING
    classes: list[PatternClass] = MISSING
    per_class: int = bounded(least=1)
    boundaries: list[str] = MISSING


@dataclass
class PatternRule:
    mixed: float = MISSING
    dominant: float = MISSING
    block: float = MISSING


@dataclass
class PatternClassifier:
    input_size: int = MISSING
    input_channels: list[str] = MISSING
    channels: list[int] = MISSING
    dropout: float = bounded(least=0, most=1)
    folds: int = MISSING
    ensemble: int = MISSING
    cv_ensemble: int = MISSING
    workers: int = MISSING
    bootstrap_resamples: int = MISSING
    epochs: int = bounded(least=1)
    batch_size: int = MISSING
    learning_rate: float = bounded(above=0)
    average_last: int = MISSING
    threads: int = MISSING


@dataclass
class PatternsConfig:
    num_examples: Optional[int] = bounded(least=1)
    labels_from: list[str] = MISSING
    sample: PatternSample = field(default_factory=PatternSample)
    heuristic: PatternRule = field(default_factory=PatternRule)
    classifier: PatternClassifier = field(default_factory=PatternClassifier)


SETTINGS = Settings("patterns", PatternsConfig)
