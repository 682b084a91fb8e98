"""Label files: who saw which map as which pattern type, and the one label each map gets.

A model's label folder `data/annotations/<model>/` holds

    maps.npz     the sampled maps and their word pieces (see `mapsets`), keyed by map id
    sample.csv   where each map comes from: map_id, variant, task, example_id, layer, head
                 (from 1), length, the threshold rule's class (`rule`), the labelling round
                 that drew it (`round`, from 1) and what chose it (`stratum`, such as
                 `rule:vertical` or `boundary:vertical|vertical+diagonal`); a file without
                 the last two is one round drawn by the rule
    visual.csv   labels made by looking at the rendered maps, following the guide
    human.csv    labels made on the annotation page (appended one at a time)

A label file has one row per (map, annotator): `map_id, label, source, annotator,
labelled_on` (other columns, such as the map's origin, are kept but not needed). `source` is
`visual` or `human`: both are labels made by looking at the map and have the same standing.
A label computed from a map's numbers is a rule label; it never enters these files.

A map labelled by several annotators gets one label (`resolve`): the majority of its labels;
a tie goes to the primary annotator (the one who labelled the most maps of the folder), so
that ties follow the one annotator who saw the whole set.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Collection, Iterable
from pathlib import Path

import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.core.io import write_table
from pipeline.kovaleva.patterns import CLASSES

LABEL_COLUMNS = ("map_id", "label", "source", "annotator", "labelled_on")
SAMPLE_COLUMNS = (
    "map_id",
    "variant",
    "task",
    "example_id",
    "layer",
    "head",
    "length",
    "rule",
    "round",
    "stratum",
)
SOURCES = ("visual", "human")
MAPS_FILE, SAMPLE_FILE, VISUAL_FILE, HUMAN_FILE = (
    "maps.npz",
    "sample.csv",
    "visual.csv",
    "human.csv",
)


def read_label_file(path: Path, known_ids: Iterable[str]) -> pd.DataFrame:
    """A label file, every row checked (columns, class, source, annotator, a known map id).

    Errors name the file and line. An absent or empty file has no labels."""
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=list(LABEL_COLUMNS))
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        raise PipelineError(f"{path}: lacks columns {missing}; expected {list(LABEL_COLUMNS)}")
    known = set(known_ids)
    for line, row in enumerate(frame.itertuples(index=False), start=2):  # line 1: header
        check_label(f"{path}:{line}", row.map_id, row.label, row.source, row.annotator, known)
    return frame


def check_label(
    where: str, map_id: str, label: str, source: str, annotator: str, known: Collection[str]
) -> None:
    """Refuse a label row that `read_label_file` would refuse (`where` names the row)."""
    if label not in CLASSES:
        raise PipelineError(
            f"{where}: unknown class '{label}'; valid classes: {', '.join(CLASSES)}"
        )
    if source not in SOURCES:
        raise PipelineError(
            f"{where}: source '{source}'; a label made by looking is visual or human "
            "(rule labels do not belong in label files)"
        )
    if not annotator.strip():
        raise PipelineError(f"{where}: no annotator; name who made the label")
    if map_id not in known:
        raise PipelineError(
            f"{where}: map '{map_id}' is not in the folder's {MAPS_FILE}; label only "
            "sampled maps (python -m tools.patterns_sample)"
        )


def read_sample(path: Path) -> pd.DataFrame:
    """The sample file: one row per sampled map (layers and heads from 1, as written)."""
    if not path.exists():
        raise PipelineError(f"sample file not found: {path}; draw it with tools.patterns_sample")
    frame = pd.read_csv(
        path, dtype={"map_id": str, "variant": str, "task": str, "rule": str, "stratum": str}
    )
    if "round" not in frame.columns:  # a file of one round, drawn by the rule
        frame["round"] = 1
    if "stratum" not in frame.columns:
        frame["stratum"] = "rule:" + frame["rule"]
    missing = [c for c in SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        raise PipelineError(f"{path}: lacks columns {missing}; expected {list(SAMPLE_COLUMNS)}")
    if frame["map_id"].duplicated().any():
        first = frame.loc[frame["map_id"].duplicated(), "map_id"].iloc[0]
        raise PipelineError(f"{path}: map id '{first}' appears twice; ids must be unique")
    return frame


def read_labels(folder: Path, known_ids: Iterable[str]) -> pd.DataFrame:
    """Every label of the folder (visual and human files), one row per (map, annotator)."""
    known = list(known_ids)
    frames = [read_label_file(folder / name, known) for name in (VISUAL_FILE, HUMAN_FILE)]
    return pd.concat(frames, ignore_index=True)[list(LABEL_COLUMNS)]


def label_folders(root: Path) -> list[Path]:
    """The label folders under `root` (those holding a sample file), by name."""
    return sorted(p.parent for p in root.glob(f"*/{SAMPLE_FILE}")) if root.exists() else []


def primary_annotator(labels: pd.DataFrame) -> str:
    """The annotator with the most labelled maps (ties: the first in file order)."""
    counts = labels.drop_duplicates(["map_id", "annotator"])["annotator"].value_counts(sort=False)
    return str(counts.idxmax())


def resolve(labels: pd.DataFrame) -> pd.DataFrame:
    """One label per map: map_id, label, num_labels, agreed (all its labels the same).

    The majority of the map's labels (one per annotator: an annotator's latest); a tie goes
    to the primary annotator's label, or, if they did not label the map, the first label."""
    if labels.empty:
        raise PipelineError("no labels to resolve; label the sampled maps first")
    latest = labels.drop_duplicates(["map_id", "annotator"], keep="last")
    primary = primary_annotator(latest)
    rows = []
    for map_id, group in latest.groupby("map_id", sort=False):
        votes = group["label"].value_counts(sort=False)
        leaders = votes[votes == votes.max()].index.tolist()
        if len(leaders) == 1:
            label = leaders[0]
        else:
            by_primary = group.loc[group["annotator"] == primary, "label"]
            label = by_primary.iloc[0] if len(by_primary) else group["label"].iloc[0]
        rows.append((map_id, label, len(group), len(votes) == 1))
    return pd.DataFrame(rows, columns=["map_id", "label", "num_labels", "agreed"])


def append_label(
    path: Path, map_id: str, label: str, annotator: str, labelled_on: str, known: Collection[str]
) -> None:
    """Append one human label and force it to disk before returning.

    The row is checked as `read_label_file` checks it (`known`: the folder's map ids), so the
    file never holds a row that the next read refuses."""
    check_label(f"{path}: new row", map_id, label, "human", annotator, known)
    new = not path.exists() or path.stat().st_size == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        if not new:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) not in (b"\n", b"\r"):  # a hand-edited file's last line
                handle.write(b"\n")
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        if new:
            writer.writerow(LABEL_COLUMNS)
        writer.writerow([map_id, label, "human", annotator, labelled_on])
        handle.write(text.getvalue().encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def drop_last_label(path: Path) -> str | None:
    """Remove the last label of a file (atomically); return its map id, or None if none."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if frame.empty:
        return None
    write_table(path, frame.iloc[:-1])
    return str(frame["map_id"].iloc[-1])
