"""Which maps get labelled: random dev examples x heads, as Kovaleva et al. sampled them."""

from __future__ import annotations

import numpy as np

from pipeline.patterns.labels import MapId
from pipeline.store import AttentionStore


def sample_map_ids(
    store: AttentionStore, variant: str, task: str, count: int, seed: int
) -> list[MapId]:
    """`count` distinct maps drawn uniformly from (example, layer, head) of one store,
    sorted by id (so the maps of one example are read together)."""
    examples = store.example_ids(variant, task)
    per_example = store.num_layers * store.num_heads
    total = len(examples) * per_example
    rng = np.random.default_rng(seed)
    picks = rng.choice(total, size=min(count, total), replace=False)
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
