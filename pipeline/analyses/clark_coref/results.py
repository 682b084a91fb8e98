"""What the clark_coref stage writes that others read: on GAP, the best head's accuracy
against the nearest-mention baseline (metrics/clark_coref/gap.json)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.results import Covers, Metrics
from pipeline.core.stats import Interval


@dataclass(frozen=True)
class GapMetrics(Metrics):
    stage = "clark_coref"
    covers = Covers.RUN

    head_minus_nearest: Interval  # head accuracy - nearest mention's, same report examples
