"""The `dump_attention` config group's schema; its values are conf/dump_attention/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import CapturedMeasure, Quantize

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045


@dataclass
class DumpAttentionConfig:
    num_examples: Optional[int] = bounded(least=1)
    batch_size: int = MISSING
    quantize: Quantize = MISSING
    row_group_mib: int = MISSING
    measures: list[CapturedMeasure] = MISSING


SETTINGS = Settings("dump_attention", DumpAttentionConfig)
