"""What the clark_heads stage writes that others read: per task and fine-tuning seed, how
much more alike heads of one layer attend (metrics/clark_heads/<task>/seed<N>.json)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.results import Covers, Metrics
from pipeline.core.stats import Interval


@dataclass(frozen=True)
class ClarkHeadsMetrics(Metrics):
    stage = "clark_heads"
    covers = Covers.TASK_SEED

    # mean distance between heads of different layers - of the same layer
    same_layer_margin: Interval
