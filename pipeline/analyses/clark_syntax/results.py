"""What the clark_syntax stage writes that others read: on UD English EWT, each relation's
best head against the best fixed offset, the best head over all relations (alone, and its
gain against the specialised relations'), and the attention probe against right branching
(metrics/clark_syntax/ud.json)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.results import Covers, Family, Metrics, family, interval_at, interval_keys
from pipeline.core.stats import Interval

HEAD_MINUS_OFFSET = "_head_minus_offset"
ALL_RELATIONS = "all_relations"


def _by_relation(flat: Mapping[str, Any], place: str, stage: str) -> dict[str, Interval]:
    """relation -> its best head's accuracy - the best offset's (`<relation>_head_minus_
    offset`; a relation with too few arcs is left out)."""
    return {k.removesuffix(HEAD_MINUS_OFFSET): interval_at(flat, k) for k in interval_keys(flat)
            if k.endswith(HEAD_MINUS_OFFSET)}  # fmt: skip


@dataclass(frozen=True)
class UdMetrics(Metrics):
    stage = "clark_syntax"
    covers = Covers.RUN

    # relation -> Interval
    head_minus_offset: Family = field(metadata=family(_by_relation, "relation"))
    all_relations_head_accuracy: Interval
    probe_minus_right_branching: Interval
    # the best head for all relations' gain over its offset / the median gain of Clark et
    # al.'s specialised relations; None for a run written before the stage kept it
    all_relations_relative_gain: Interval | None = None

    def scored_relations(self) -> list[str]:
        """The relations scored (with a head-offset difference), without all relations."""
        return sorted(r for r in self.head_minus_offset if r != ALL_RELATIONS)
