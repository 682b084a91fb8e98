"""What the patterns_apply stage writes that others read: per fine-tuning seed, each
task's share of every pattern type among its fine-tuned maps (the classifier's, and the one
estimated from the share round), the share of vertical maps on [CLS]/[SEP], and the
classifier's seed stability (metrics/patterns_apply/seed<N>.json)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import (
    Covers,
    Family,
    Metrics,
    family,
    interval_at,
    interval_keys,
    key,
)
from pipeline.core.schema import PatternClass
from pipeline.core.stats import Interval

FINETUNED = "finetuned"  # the variant the claims read
ESTIMATED = f".{FINETUNED}.estimated."


def _shares(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, Family]:
    """task -> pattern type -> its share among the task's fine-tuned maps (`<task>.finetuned.
    <type>`)."""
    found: dict[str, dict[str, Interval]] = {}
    for k in interval_keys(flat):
        task, variant, kind = [*k.split(".", 2), "", ""][:3]
        if variant == FINETUNED and kind in PatternClass.__members__:
            found.setdefault(task, {})[kind] = interval_at(flat, k)
    return {t: Family(kinds, place, f"{t} pattern type", stage) for t, kinds in found.items()}


def _on_special(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, Interval]:
    """task -> share of its fine-tuned vertical maps whose strongest column is [CLS] or
    [SEP] (absent where no map was called vertical)."""
    suffix = f".{FINETUNED}.vertical_on_special"
    return {k.removesuffix(suffix): interval_at(flat, k) for k in interval_keys(flat)
            if k.endswith(suffix)}  # fmt: skip


def _estimated(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, Family]:
    """task -> pattern type (or `first_three`) -> its share among the task's fine-tuned maps,
    estimated from the share round (`<task>.finetuned.estimated.<type>`; absent without a
    round, or where a call holding the task's maps has no labelled map)."""
    found: dict[str, dict[str, Interval]] = {}
    for k in interval_keys(flat):
        if ESTIMATED in k:
            task, kind = k.split(ESTIMATED)
            found.setdefault(task, {})[kind] = interval_at(flat, k)
    return {t: Family(kinds, place, f"{t} estimated share", stage) for t, kinds in found.items()}


@dataclass(frozen=True)
class PatternsApplyMetrics(Metrics):
    stage = "patterns_apply"
    covers = Covers.SEED

    # task -> pattern type -> Interval
    shares: Family = field(metadata=family(_shares, "task"))
    # task -> Interval
    vertical_on_special: Family = field(metadata=family(_on_special, "task's vertical maps"))
    # task -> pattern type or first_three -> Interval (the share round's estimate)
    estimated: Family = field(metadata=family(_estimated, "task's estimated shares"))
    # the largest change of any share between two classifier seeds
    max_share_change: float = field(metadata=key("seed_stability.max_share_change"))
