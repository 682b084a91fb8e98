"""What the measures stage writes that others read: per task and fine-tuning seed, the
attention [CLS] and [SEP] receive under value-weighted norms over under raw weights, and each
token kind's share of attention per layer under each measure
(metrics/measures/<task>/seed<N>.json)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import Covers, Family, Metrics, family
from pipeline.core.stats import Interval

BY_LAYER = re.compile(r"^(\w+\.\w+)\.L(\d+)$")  # <token kind>.<measure>.L<layer>


@dataclass(frozen=True)
class MeasuresMetrics(Metrics):
    stage = "measures"
    covers = Covers.TASK_SEED

    special_norms_over_weights: Interval


def _by_layer(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, tuple[float, ...]]:
    """`<token kind>.<measure>` -> its share of attention in each layer, from layer 1."""
    found: dict[str, dict[int, float]] = {}
    for key, value in flat.items():
        if matched := BY_LAYER.match(key):
            found.setdefault(matched[1], {})[int(matched[2])] = float(value)
    return {name: tuple(v for _, v in sorted(layers.items())) for name, layers in found.items()}


@dataclass(frozen=True)
class MeasuresByLayer(Metrics):
    """The same file's shares by layer (the docs' table of them, measures' blocks.py)."""

    stage = "measures"
    covers = Covers.TASK_SEED

    shares: Family = field(metadata=family(_by_layer, "token kind and measure"))
