"""The annotation session behind the annotation page (see `server`): which map comes next.

`AnnotationSession` holds the queue (the sampled maps, in file order) and the human label
file; every label is appended to that file at once (and fsync'ed), so killing the server loses
nothing, and a new session starts at the first map without a human label. Skipping moves a
map to the end of this session's queue; undo removes the last human label from the file and
shows its map again. A map's `id` counts layers and heads from 0 (as `MapId`); its `title`,
which the page shows, names the head from 1 (`L3-H5`), as the label file numbers it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from pipeline.core.heads import head_name
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.labels import (
    HEURISTIC_FILE,
    HUMAN_FILE,
    MapId,
    append_label,
    drop_last_label,
    labelled_map_ids,
    map_ids,
    read_labels,
)
from pipeline.kovaleva.patterns.maps import load_maps, open_stores


@dataclass(frozen=True)
class MapView:
    """What the page draws: the tokens and the map float [n, n] (rows: queries)."""

    tokens: list[str]
    weights: np.ndarray


def map_title(map_id: MapId) -> str:
    """How the page names a map: 'rte, finetuned, example 7, L3-H5'."""
    return (
        f"{map_id.task}, {map_id.variant}, example {map_id.example_id}, "
        f"{head_name(map_id.layer, map_id.head)}"
    )


class AnnotationSession:
    def __init__(
        self, queue: list[MapId], labels_path: Path, load: Callable[[MapId], MapView]
    ) -> None:
        self.order = list(dict.fromkeys(queue))
        self.labels_path = labels_path
        self.load = load
        self.lock = threading.Lock()
        self.done: set[MapId] = set(labelled_map_ids(labels_path)) & set(self.order)

    def current(self) -> MapId | None:
        return next((m for m in self.order if m not in self.done), None)

    def state(self) -> dict:
        current = self.current()
        view = None
        if current is not None:
            shown = self.load(current)
            view = {
                "id": list(current),
                "title": map_title(current),
                "tokens": shown.tokens,
                "weights": np.round(shown.weights.astype(float), 4).tolist(),
            }
        return {
            "progress": {"done": len(self.done), "total": len(self.order)},
            "classes": list(CLASSES),
            "current": view,
        }

    def label(self, map_id: MapId, label: str) -> None:
        append_label(
            self.labels_path, map_id, label, datetime.now(UTC).isoformat(timespec="seconds")
        )
        self.done.add(map_id)

    def skip(self, map_id: MapId) -> None:
        self.order.remove(map_id)
        self.order.append(map_id)

    def undo(self) -> None:
        undone = drop_last_label(self.labels_path)
        if undone is None:
            return
        remaining = set(labelled_map_ids(self.labels_path))
        if undone not in remaining:
            self.done.discard(undone)
        if undone in self.order:
            self.order.remove(undone)
            self.order.insert(0, undone)


def open_session(annotations: Path, attention: Path, model: str) -> AnnotationSession:
    """The session over the sampled maps of `annotations` (a model's label folder), read from
    the attention stores `attention/<task>.parquet` of `model`; labels go to its human file."""
    queue = map_ids(read_labels(annotations / HEURISTIC_FILE))
    stores = open_stores(attention, sorted({m.task for m in queue}), model)

    def load(map_id: MapId) -> MapView:
        tokens = stores[map_id.task].tokens(map_id.task, map_id.example_id).tokens
        return MapView(tokens=list(tokens), weights=load_maps(stores, [map_id])[0])

    return AnnotationSession(queue, annotations / HUMAN_FILE, load)
