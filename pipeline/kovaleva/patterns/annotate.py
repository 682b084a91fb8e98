"""The annotation session behind the annotation page (see `server`): which map comes next.

`AnnotationSession` holds the queue (the sampled maps of a label folder, in sample order) and
the human label file; every label is appended to that file at once (and fsync'ed) with the
annotator's name and the time, so killing the server loses nothing, and a new session starts
at the first map this annotator has not labelled. Skipping moves a map to the end of this
session's queue; undo removes the annotator's last label from the file and shows its map
again. The page shows the maps and word pieces of the folder's map set, and the project's
definition of the five types (`DEFINITIONS`, `HARD_CASES`), never another label.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES, DEFINITIONS, HARD_CASES
from pipeline.kovaleva.patterns.labels import (
    HUMAN_FILE,
    MAPS_FILE,
    SAMPLE_FILE,
    append_label,
    drop_last_label,
    read_label_file,
    read_sample,
)
from pipeline.kovaleva.patterns.mapsets import LabelledMap, read_map_set


class AnnotationSession:
    def __init__(self, maps: dict[str, LabelledMap], labels_path: Path, annotator: str) -> None:
        if not annotator.strip():
            raise PipelineError("annotator: empty name; give yours with --annotator NAME")
        self.maps = maps
        self.order = list(maps)
        self.labels_path = labels_path
        self.annotator = annotator
        self.lock = threading.Lock()
        self.done: set[str] = self._labelled() & set(self.order)

    def _labelled(self) -> set[str]:
        labels = read_label_file(self.labels_path, self.maps)
        return set(labels.loc[labels["annotator"] == self.annotator, "map_id"])

    def current(self) -> str | None:
        return next((m for m in self.order if m not in self.done), None)

    def state(self) -> dict:
        current = self.current()
        view = None
        if current is not None:
            shown = self.maps[current]
            view = {
                "id": current,
                "title": f"{current} ({len(shown.tokens)} word pieces)",
                "tokens": list(shown.tokens),
                "weights": np.round(shown.weights.astype(float), 4).tolist(),
            }
        return {
            "progress": {"done": len(self.done), "total": len(self.order)},
            "annotator": self.annotator,
            "classes": list(CLASSES),
            "definitions": DEFINITIONS,
            "hard_cases": list(HARD_CASES),
            "current": view,
        }

    def label(self, map_id: str, label: str) -> None:
        labelled_on = datetime.now(UTC).isoformat(timespec="seconds")
        append_label(self.labels_path, map_id, label, self.annotator, labelled_on, self.maps)
        self.done.add(map_id)

    def skip(self, map_id: str) -> None:
        self.order.remove(map_id)
        self.order.append(map_id)

    def undo(self) -> None:
        frame = read_label_file(self.labels_path, self.maps)
        if frame.empty or frame["annotator"].iloc[-1] != self.annotator:
            return  # only the annotator's own last label can be undone
        undone = drop_last_label(self.labels_path)
        if undone is None:
            return
        if undone not in self._labelled():
            self.done.discard(undone)
        if undone in self.order:
            self.order.remove(undone)
            self.order.insert(0, undone)


def open_session(annotations: Path, annotator: str) -> AnnotationSession:
    """The session over the sampled maps of a label folder (its maps.npz, in sample.csv's
    order); `annotator`'s labels go to the folder's human file."""
    maps = read_map_set(annotations / MAPS_FILE)
    order = [m for m in read_sample(annotations / SAMPLE_FILE)["map_id"] if m in maps]
    return AnnotationSession({m: maps[m] for m in order}, annotations / HUMAN_FILE, annotator)
