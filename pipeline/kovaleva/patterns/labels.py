"""Label files: one labelled attention map per CSV row.

A map id is (variant, task, example_id, layer, head): the map of `head` in `layer` of model
variant `variant` (pretrained / finetuned) on dev example `example_id` of `task`, as the
attention store holds it. A label file has the columns

    variant, task, example_id, layer, head, label, source [, extra columns]

with `label` one of the five classes and `source` `human` or `heuristic`. In a file, layers
and heads count from 1 (as pipeline/core/heads.py names them for people); in memory (`MapId`,
the frames of `read_labels`) they count from 0, as in the attention store. The functions here
convert at the file boundary: `read_labels`, `write_labels`, `append_label`, `drop_last_label`.

The folder `data/annotations/<model>/` holds two: `heuristic.csv` (the sampled maps with their
heuristic labels and features, written by `stages.patterns_sample`) and `human.csv` (appended
to by the annotation page, one row per label, with the time in `annotated_at`). The labelled
set (`read_annotations`) is their union, where a human label always wins over a heuristic one.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, Protocol

import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.core.heads import numbered_from_one
from pipeline.core.io import write_table
from pipeline.kovaleva.patterns import CLASSES

ID_COLUMNS = ("variant", "task", "example_id", "layer", "head")
LABEL_COLUMNS = (*ID_COLUMNS, "label", "source")
HUMAN_COLUMNS = (*LABEL_COLUMNS, "annotated_at")
SOURCES = ("human", "heuristic")
HEURISTIC_FILE = "heuristic.csv"
HUMAN_FILE = "human.csv"


class MapId(NamedTuple):
    variant: str
    task: str
    example_id: int
    layer: int  # from 0
    head: int  # from 0


class MapCatalogue(Protocol):
    """What label checking needs from an attention store."""

    num_layers: int
    num_heads: int

    def example_ids(self, variant: str, task: str) -> list[int]: ...


def map_ids(frame: pd.DataFrame) -> list[MapId]:
    """The map ids of an in-memory label frame (layers and heads from 0), in row order."""
    rows = frame[list(ID_COLUMNS)].itertuples(index=False)
    return [MapId(v, t, int(e), int(layer), int(h)) for v, t, e, layer, h in rows]


def _numbered_from_zero(frame: pd.DataFrame) -> pd.DataFrame:
    """A label frame as read from a file (layers and heads from 1) -> from 0."""
    return frame.assign(layer=frame["layer"] - 1, head=frame["head"] - 1)


def read_labels(path: Path) -> pd.DataFrame:
    """A label file, checked row by row, with layers and heads counted from 0; column `line`
    keeps each row's line in the file."""
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
        for column in ("layer", "head"):
            if getattr(row, column) < 1:
                raise PipelineError(
                    f"{where}: {column} {getattr(row, column)}: label files count layers and "
                    "heads from 1"
                )
    frame = frame.astype({"example_id": int, "layer": int, "head": int})
    return _numbered_from_zero(frame)


def labelled_map_ids(path: Path) -> list[MapId]:
    """The map ids of a label file, in row order; none if the file is absent or empty."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    return map_ids(read_labels(path))


def write_labels(path: Path, labels: pd.DataFrame) -> None:
    """Write an in-memory label frame (layers and heads from 0) as a label file (from 1)."""
    write_table(path, numbered_from_one(labels))


def append_label(path: Path, map_id: MapId, label: str, annotated_at: str) -> None:
    """Append one human label and force it to disk before returning."""
    if label not in CLASSES:
        raise PipelineError(f"unknown class '{label}'; valid classes: {', '.join(CLASSES)}")
    new = not path.exists() or path.stat().st_size == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    on_disk = map_id._replace(layer=map_id.layer + 1, head=map_id.head + 1)
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(HUMAN_COLUMNS)
        writer.writerow([*on_disk, label, "human", annotated_at])
        handle.flush()
        os.fsync(handle.fileno())


def drop_last_label(path: Path) -> MapId | None:
    """Remove the last human label (atomically); return its map id, or None if there is none."""
    if not path.exists():
        return None
    frame = pd.read_csv(path)
    if frame.empty:
        return None
    last = map_ids(_numbered_from_zero(frame.tail(1)))[0]
    write_table(path, frame.iloc[:-1])
    return last


def check_in_store(frame: pd.DataFrame, path: Path, stores: Mapping[str, MapCatalogue]) -> None:
    """Fail on the first row of `frame` (read from `path`) whose map is not in the attention
    store of its task. Errors quote layers and heads as the file numbers them (from 1)."""
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
                f"{where}: layer {row.layer + 1}, head {row.head + 1} is outside the store's "
                f"{store.num_layers} layers x {store.num_heads} heads (counted from 1)"
            )


def merge_labels(heuristic: pd.DataFrame, human: pd.DataFrame | None) -> pd.DataFrame:
    """The labelled set: one row per map, the latest human label winning over the heuristic."""
    parts = [heuristic[list(LABEL_COLUMNS)]]
    if human is not None:
        parts.append(human[list(LABEL_COLUMNS)])
    merged = pd.concat(parts, ignore_index=True)
    return merged.drop_duplicates(list(ID_COLUMNS), keep="last").reset_index(drop=True)


def _read_checked(path: Path, stores: Mapping[str, MapCatalogue]) -> pd.DataFrame:
    """The rows of a label file whose task has a store, each checked against it."""
    frame = read_labels(path)
    frame = frame[frame["task"].isin(stores)]  # tasks outside this run are not used
    check_in_store(frame, path, stores)
    return frame


def read_annotations(folder: Path, stores: Mapping[str, MapCatalogue]) -> pd.DataFrame:
    """The labelled set of `folder`: its heuristic labels overridden by its human ones (if
    any), of the tasks of `stores`, every row checked against them."""
    human_path = folder / HUMAN_FILE
    labels = merge_labels(
        _read_checked(folder / HEURISTIC_FILE, stores),
        _read_checked(human_path, stores) if human_path.exists() else None,
    )
    if labels.empty:
        raise PipelineError(
            f"{folder} has no labelled maps of the tasks {sorted(stores)}; sample them with "
            "`python -m stages.patterns_sample --dvc` or set patterns.labels=heuristic"
        )
    return labels
