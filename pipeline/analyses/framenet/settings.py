"""The `framenet` config group's schema; its values are conf/framenet/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class FramenetConfig:
    source: str = MISSING
    max_tokens: int = MISSING
    max_fe_tokens: int = MISSING
    target_window: int = MISSING
    num_sentences: Optional[int] = bounded(least=1)
    batch_size: int = MISSING
    top_heads: int = MISSING
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("framenet", FramenetConfig)
