"""What the measures stage writes that others read: per task and fine-tuning seed, the
attention [CLS] and [SEP] receive under value-weighted norms over under raw weights
(metrics/measures/<task>/seed<N>.json)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.results import Covers, Metrics
from pipeline.core.stats import Interval


@dataclass(frozen=True)
class MeasuresMetrics(Metrics):
    stage = "measures"
    covers = Covers.TASK_SEED

    special_norms_over_weights: Interval
