"""Label files: one labelled attention map per CSV row.

A map id is (variant, task, example_id, layer, head): the map of `head` in `layer` of model
variant `variant` (pretrained / finetuned) on dev example `example_id` of `task`, as the
attention store holds it. A label file has the columns

    variant, task, example_id, layer, head, label, source [, extra columns]

with `label` one of the five classes and `source` `human` or `heuristic`. The folder
`data/annotations/<model>/` holds two: `heuristic.csv` (the sampled maps with their heuristic
labels and features, written by `stages.patterns_sample`) and `human.csv` (appended to by the
annotation page, one row per label, with the time in `annotated_at`). The labelled set is
their union, where a human label always wins over a heuristic one.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, Protocol

import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.core.io import write_table
from pipeline.kovaleva.patterns import CLASSES

ID_COLUMNS = ("variant", "task", "example_id", "layer", "head")
LABEL_COLUMNS = (*ID_COLUMNS, "label", "source")
HUMAN_COLUMNS = (*LABEL_COLUMNS, "annotated_at")
SOURCES = ("human", "heuristic")


class MapId(NamedTuple):
    variant: str
    task: str
    example_id: int
    layer: int
    head: int


class MapCatalogue(Protocol):
    """What label checking needs from an attention store."""

    num_layers: int
    num_heads: int

    def example_ids(self, variant: str, task: str) -> list[int]: ...


def map_ids(frame: pd.DataFrame) -> list[MapId]:
    """The map ids of a label frame, in row order."""
    rows = frame[list(ID_COLUMNS)].itertuples(index=False)
    return [MapId(v, t, int(e), int(layer), int(h)) for v, t, e, layer, h in rows]


def read_labels(path: Path) -> pd.DataFrame:
    """A label file, checked row by row; column `line` keeps each row's line in the file."""
    if not path.exists():
        raise PipelineError(
            f"label file not found: {path}; write it with `python -m stages.patterns_sample --dvc`"
        )
    frame = pd.read_csv(path, dtype={"variant": str, "task": str, "label": str, "source": str})
    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        raise PipelineError(f"{path}: lacks columns {missing}; expected {list(LABEL_COLUMNS)}")
    frame["line"] = range(2, len(frame) + 2)  # line 1 is the header
    for row in frame.itertuples(index=False):
        where = f"{path}:{row.line}"
        if row.label not in CLASSES:
            raise PipelineError(
                f"{where}: unknown class '{row.label}'; valid classes: {', '.join(CLASSES)}"
            )
        if row.source not in SOURCES:
            raise PipelineError(f"{where}: unknown source '{row.source}'; use human or heuristic")
        for column in ("example_id", "layer", "head"):
            value = getattr(row, column)
            if pd.isna(value) or float(value) != int(value):
                raise PipelineError(f"{where}: {column} '{value}' is not an integer")
    return frame.astype({"example_id": int, "layer": int, "head": int})


def check_in_store(frame: pd.DataFrame, path: Path, stores: Mapping[str, MapCatalogue]) -> None:
    """Fail on the first row whose map is not in the attention store of its task."""
    known: dict[tuple[str, str], set[int]] = {}
    for row in frame.itertuples(index=False):
        where = f"{path}:{row.line}"
        store = stores.get(row.task)
        if store is None:
            raise PipelineError(
                f"{where}: task '{row.task}' has no attention store; "
                f"tasks with one: {', '.join(sorted(stores))}"
            )
        key = (row.variant, row.task)
        if key not in known:
            try:
                known[key] = set(map(int, store.example_ids(row.variant, row.task)))
            except (KeyError, ValueError, PipelineError):
                known[key] = set()
        if row.example_id not in known[key]:
            raise PipelineError(
                f"{where}: map ({row.variant}, {row.task}, example {row.example_id}) is not in "
                "the attention store; relabel from this dump (python -m stages.patterns_sample "
                "--dvc) or dump that example"
            )
        if not (0 <= row.layer < store.num_layers and 0 <= row.head < store.num_heads):
            raise PipelineError(
                f"{where}: layer {row.layer}, head {row.head} is outside the store's "
                f"{store.num_layers} layers x {store.num_heads} heads"
            )


def merge_labels(heuristic: pd.DataFrame, human: pd.DataFrame | None) -> pd.DataFrame:
    """The labelled set: one row per map, the latest human label winning over the heuristic."""
    parts = [heuristic[list(LABEL_COLUMNS)]]
    if human is not None:
        parts.append(human[list(LABEL_COLUMNS)])
    merged = pd.concat(parts, ignore_index=True)
    return merged.drop_duplicates(list(ID_COLUMNS), keep="last").reset_index(drop=True)


def append_label(path: Path, map_id: MapId, label: str, annotated_at: str) -> None:
    """Append one human label and force it to disk before returning."""
    if label not in CLASSES:
        raise PipelineError(f"unknown class '{label}'; valid classes: {', '.join(CLASSES)}")
    new = not path.exists() or path.stat().st_size == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(HUMAN_COLUMNS)
        writer.writerow([*map_id, label, "human", annotated_at])
        handle.flush()
        os.fsync(handle.fileno())


def drop_last_label(path: Path) -> MapId | None:
    """Remove the last human label (atomically); return its map id, or None if there is none."""
    if not path.exists():
        return None
    frame = pd.read_csv(path)
    if frame.empty:
        return None
    last = map_ids(frame.tail(1))[0]
    write_table(path, frame.iloc[:-1])
    return last
