"""What the clark_heads stage writes that others read: per task and fine-tuning seed, how
much more alike heads of one layer attend, each layer's attention to [SEP], and the middle
layers' attention to [SEP] and to any sink token (metrics/clark_heads/<task>/seed<N>.json)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import Covers, Family, Metrics, family, interval_at
from pipeline.core.stats import Interval

SEP_LAYER = re.compile(r"sep_attention\.L(\d+)")


def _sep_layers(flat: Mapping[str, Any], place: str, stage: str) -> dict[int, Interval]:
    """layer (from 1) -> its heads' mean attention to [SEP], with its interval over examples."""
    return {int(m[1]): interval_at(flat, k) for k in flat if (m := SEP_LAYER.fullmatch(k))}


@dataclass(frozen=True)
class ClarkHeadsMetrics(Metrics):
    stage = "clark_heads"
    covers = Covers.TASK_SEED

    # mean distance between heads of different layers - of the same layer
    same_layer_margin: Interval
    # layer (from 1) -> attention to [SEP]; empty for a run written before the stage kept it
    sep_attention: Family = field(metadata=family(_sep_layers, "layer"))
    examples: int  # the dev examples read
    # the middle layers' (pipeline.clark.attend.middle_layers) attention to [SEP], and to any
    # of [CLS], [SEP] and punctuation; None for a run written before the stage kept them
    sep_middle: Interval | None = None
    sink_middle: Interval | None = None
