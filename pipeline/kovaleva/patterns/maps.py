"""Reading the maps of given map ids from attention stores, and labelling them by heuristic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.attention.store import AttentionStore
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.heuristic import Thresholds, heuristic_labels
from pipeline.kovaleva.patterns.labels import ID_COLUMNS, MapId


def open_stores(folder: Path, tasks: Sequence[str], model: str) -> dict[str, AttentionStore]:
    """task -> its attention store `folder/<task>.parquet`, checked to hold `model`'s maps."""
    return {task: AttentionStore(folder / f"{task}.parquet", expect_model=model) for task in tasks}


def load_maps(stores: Mapping[str, AttentionStore], ids: Sequence[MapId]) -> list[np.ndarray]:
    """The map float32 [n, n] of each id, in the order of `ids`."""
    out: dict[MapId, np.ndarray] = {}
    pairs = sorted({(m.variant, m.task) for m in ids})
    for variant, task in pairs:
        wanted = [m for m in ids if (m.variant, m.task) == (variant, task)]
        examples = {m.example_id for m in wanted}
        for example_id, maps in stores[task].iter_maps(variant, task, examples=examples):
            for m in wanted:
                if m.example_id == example_id:
                    out[m] = maps[m.layer, m.head]  # [n, n]
    return [out[m] for m in ids]


def _example(pair: tuple[MapId, np.ndarray]) -> tuple[str, str, int]:
    return pair[0][:3]  # (variant, task, example_id)


def label_by_heuristic(
    stores: Mapping[str, AttentionStore], ids: Sequence[MapId], thresholds: Thresholds
) -> pd.DataFrame:
    """One row per id: the id columns, the features, the heuristic label and its source."""
    maps = load_maps(stores, ids)
    rows = []
    for (_, task, example_id), group in groupby(zip(ids, maps, strict=True), key=_example):
        group = list(group)
        info = stores[task].tokens(task, example_id)
        stack = np.stack([m for _, m in group])  # [k, n, n]
        features = map_features(stack, special_mask(info.tokens), info.segment_ids)
        features.insert(0, "map", [m for m, _ in group])
        rows.append(features)
    frame = pd.concat(rows, ignore_index=True)
    ids_frame = pd.DataFrame(list(frame.pop("map")), columns=list(ID_COLUMNS))
    frame = pd.concat([ids_frame, frame], axis=1)
    frame.insert(len(ID_COLUMNS), "label", heuristic_labels(frame, thresholds))
    frame.insert(len(ID_COLUMNS) + 1, "source", "heuristic")
    return frame
