"""Which maps get labelled: random dev examples x heads, as Kovaleva et al. sampled them."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from pipeline.attention.store import AttentionStore
from pipeline.data.sampling import seeded_subset
from pipeline.kovaleva.patterns.heuristic import Thresholds
from pipeline.kovaleva.patterns.labels import MapId
from pipeline.kovaleva.patterns.maps import label_by_heuristic
from pipeline.kovaleva.patterns.settings import SampleSettings


def sample_map_ids(
    store: AttentionStore, variant: str, task: str, count: int, seed: int
) -> list[MapId]:
    """`count` distinct maps drawn uniformly from (example, layer, head) of one store,
    sorted by id (so the maps of one example are read together)."""
    examples = store.example_ids(variant, task)
    per_example = store.num_layers * store.num_heads
    total = len(examples) * per_example
    picks = seeded_subset(total, count, seed)
    ids = [
        MapId(
            variant,
            task,
            examples[p // per_example],
            *divmod(int(p % per_example), store.num_heads),
        )
        for p in picks
    ]
    return sorted(ids)


def sample_labels(
    stores: Mapping[str, AttentionStore],
    sample: SampleSettings,
    thresholds: Thresholds,
    seed: int,
) -> pd.DataFrame:
    """`sample.maps_per_task` sampled maps of each task (seed + the task's position),
    labelled by the heuristic, with their features (see maps.label_by_heuristic)."""
    ids = [
        map_id
        for offset, (task, store) in enumerate(stores.items())
        for map_id in sample_map_ids(
            store, sample.variant, task, sample.maps_per_task, seed + offset
        )
    ]
    return label_by_heuristic(stores, ids, thresholds)
