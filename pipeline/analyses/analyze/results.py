"""What the analyze stage writes that others read: per task and fine-tuning seed, how much
fine-tuning changed each layer's attention (metrics/analyze/<task>/seed<N>.json)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import Covers, Family, Metrics, family, key
from pipeline.core.stats import Interval

LAYER = re.compile(r"cosine\.L(\d+)")


def _layers(flat: Mapping[str, Any], place: str, stage: str) -> dict[int, float]:
    """layer (from 1) -> mean cosine between its pre-trained and fine-tuned maps."""
    return {int(m[1]): float(v) for k, v in flat.items() if (m := LAYER.fullmatch(k))}


@dataclass(frozen=True)
class AnalyzeMetrics(Metrics):
    stage = "analyze"
    covers = Covers.TASK_SEED

    layer_cosine: Family = field(metadata=family(_layers, "layer"))  # layer -> cosine
    # least change among the last two layers - most change among the others (three or more)
    last_two_margin: Interval | None = field(metadata=key("cosine.last_two_margin"))
