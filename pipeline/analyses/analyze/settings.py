"""The `analyze` config group's schema; its values are conf/analyze/default.yaml."""

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
class TokenTypeRule:
    pos: list[str] = MISSING  # coarse POS tags
    dep: list[str] = MISSING  # dependency labels
    lower: list[str] = MISSING


@dataclass
class GridConfig:
    variant: Variant = MISSING
    max_tokens: int = MISSING


@dataclass
class AnalyzeConfig:
    num_examples: Optional[int] = bounded(least=1)
    chunk_examples: int = bounded(least=1)
    spacy_model: str = MISSING
    token_types: dict[str, TokenTypeRule] = MISSING
    grid: GridConfig = field(default_factory=GridConfig)
    measure: Measure = MISSING  # maps analysed (README, Measures)
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("analyze", AnalyzeConfig)
