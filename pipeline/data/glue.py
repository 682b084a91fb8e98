"""GLUE from the hub (nyu-mll/glue) or from a classic glue_data folder, as DataFrames.

Every split comes out with the same columns: `idx` (row number in the original split), the
task's text columns (hub names, e.g. sentence1/sentence2) and `label` (int class index, or
float score for STS-B). The classic files have quirks this module absorbs: MRPC's UTF-8
byte-order mark and its own column names, CoLA without a header, STS-B's float scores,
MNLI's matched and mismatched dev files, QQP's malformed lines (skipped and counted).

`prepare_task` is the prepare stage's work: every labelled split of a task, subsampled.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.analyses.prepare.settings import PrepareConfig
from pipeline.core.schema import TaskConfig

log = logging.getLogger(__name__)

HUB_DATASET = "nyu-mll/glue"


def split_names(task: TaskConfig) -> list[str]:
    """The labelled splits of a task: train and its dev split(s)."""
    return list(task.local.files)


def _parse_label(raw: str, task: TaskConfig, where: str) -> float | int:
    if task.is_regression:
        return float(raw)
    names = task.label_names or ()
    if raw in names:
        return names.index(raw)
    try:
        label = int(raw)
    except ValueError:
        raise PipelineError(f"{where}: label '{raw}' is not one of {list(names)}") from None
    if not 0 <= label < len(names):
        raise PipelineError(f"{where}: label {label} is outside 0..{len(names) - 1}")
    return label


def read_local_split(folder: Path, task: TaskConfig, split: str) -> tuple[pd.DataFrame, int]:
    """One split from a classic glue_data folder; returns (frame, malformed lines skipped)."""
    path = folder / task.local.folder / task.local.files[split]
    if not path.exists():
        raise PipelineError(
            f"GLUE file not found: {path}; set GLUE_DIR (or paths.glue_dir) to a glue_data "
            "folder, or use prepare.source=hub where the Hugging Face hub is reachable"
        )
    lines = path.read_text(encoding="utf-8-sig").splitlines()  # utf-8-sig drops MRPC's BOM
    columns: dict[str, str | int] = dict(task.local.columns)
    if task.local.header:
        header, lines, first_line = lines[0].split("\t"), lines[1:], 2
        missing = [c for c in columns.values() if c not in header]
        if missing:
            raise PipelineError(f"{path}: header lacks columns {missing}; is this {task.name}?")
        positions = {name: header.index(col) for name, col in columns.items()}
    else:
        positions, first_line = {name: int(col) for name, col in columns.items()}, 1
    width = max(positions.values()) + 1
    rows, skipped = [], 0
    for number, line in enumerate(lines, start=first_line):
        fields = line.split("\t")
        if len(fields) < width or any(fields[p] == "" for p in positions.values()):
            skipped += 1  # QQP has lines with missing fields; nothing can be read from them
            continue
        row = {name: fields[p] for name, p in positions.items()}
        row["label"] = _parse_label(row["label"], task, f"{path}:{number}")
        row["idx"] = len(rows) + skipped
        rows.append(row)
    if skipped:
        log.warning("%s: skipped %d malformed lines", path, skipped)
    frame = pd.DataFrame(rows, columns=["idx", *task.text_columns, "label"])
    return frame, skipped


def read_hub_split(task: TaskConfig, split: str) -> pd.DataFrame:
    """One split of nyu-mll/glue through `datasets` (needs the hub or its local cache)."""
    import datasets

    try:
        data = datasets.load_dataset(HUB_DATASET, task.hub_config, split=split)
    except Exception as error:  # datasets raises many types when offline
        raise PipelineError(
            f"cannot load {HUB_DATASET}/{task.hub_config} split {split} from the hub "
            f"({type(error).__name__}); use prepare.source=local with GLUE_DIR set"
        ) from error
    frame = data.to_pandas()
    return frame[["idx", *task.text_columns, "label"]]


def subsample(frame: pd.DataFrame, max_rows: int | None, seed: int) -> pd.DataFrame:
    """A seeded random subset of at most `max_rows` rows, kept in original order."""
    if max_rows is None or len(frame) <= max_rows:
        return frame.reset_index(drop=True)
    return frame.sample(n=max_rows, random_state=seed).sort_values("idx").reset_index(drop=True)


@dataclass(frozen=True)
class PreparedSplit:
    """The kept rows of one split and what they were drawn from."""

    frame: pd.DataFrame
    source_rows: int
    malformed_skipped: int

    def counts(self, prefix: str) -> dict[str, int]:
        """Flat metrics `<prefix>.rows`, `.source_rows` and, when any, `.malformed_skipped`."""
        counts = {f"{prefix}.rows": len(self.frame), f"{prefix}.source_rows": self.source_rows}
        if self.malformed_skipped:
            counts[f"{prefix}.malformed_skipped"] = self.malformed_skipped
        return counts


def prepare_task(
    task: TaskConfig, settings: PrepareConfig, glue_folder: Path, seed: int
) -> dict[str, PreparedSplit]:
    """Every labelled split of `task` by name, read from `settings.source` (`glue_folder` is
    the classic glue_data folder) and cut to a subset (drawn with `seed`) of at most the
    split's limit."""
    prepared = {}
    for split in split_names(task):
        if settings.source == "local":
            frame, skipped = read_local_split(glue_folder, task, split)
        else:
            frame, skipped = read_hub_split(task, split), 0
        kept = subsample(frame, settings.row_limit(task.name, split), seed)
        log.info("%s/%s: %d of %d rows", task.name, split, len(kept), len(frame))
        prepared[split] = PreparedSplit(kept, len(frame), skipped)
    return prepared


def read_split(data_root: Path, task: str, split: str) -> pd.DataFrame:
    """A prepared split (written by the prepare stage)."""
    path = Path(data_root) / "glue" / task / f"{split}.parquet"
    if not path.exists():
        raise PipelineError(f"prepared data not found: {path}; run `dvc repro prepare` first")
    return pd.read_parquet(path)
