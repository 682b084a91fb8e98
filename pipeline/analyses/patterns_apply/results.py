"""What the patterns_apply stage writes that others read: per fine-tuning seed, each
task's share of every pattern type among its fine-tuned maps, the share of vertical maps
on [CLS]/[SEP], the run's maps per threshold-rule class, and the classifier's seed
stability (metrics/patterns_apply/seed<N>.json)."""

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
RULE_MAPS = ".rule_maps."


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


def _rule_maps(flat: Mapping[str, Any], place: str, stage: str) -> dict[tuple, float]:
    """(task, variant, rule class) -> the run's maps of that cell the threshold rule puts in
    that class (`<task>.<variant>.rule_maps.<class>`)."""
    found = {}
    for k, maps in flat.items():
        if RULE_MAPS in k:
            cell, rule = k.split(RULE_MAPS)
            task, variant = cell.split(".")
            found[(task, variant, rule)] = float(maps)
    return found


@dataclass(frozen=True)
class PatternsApplyMetrics(Metrics):
    stage = "patterns_apply"
    covers = Covers.SEED

    # task -> pattern type -> Interval
    shares: Family = field(metadata=family(_shares, "task"))
    # task -> Interval
    vertical_on_special: Family = field(metadata=family(_on_special, "task's vertical maps"))
    # (task, variant, rule class) -> maps
    rule_maps: Family = field(metadata=family(_rule_maps, "rule-class count"))
    # the largest change of any share between two classifier seeds
    max_share_change: float = field(metadata=key("seed_stability.max_share_change"))
