"""A labelled share round joins its label folder (tools/merge_round.py): its maps, sample
rows and labels are appended and its stratifier and plan kept; a round merged twice, or one
with an unlabelled map, is refused before any file changes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.kovaleva.patterns.labels import SAMPLE_COLUMNS
from pipeline.kovaleva.patterns.mapsets import LabelledMap, read_map_set, write_map_set
from tools import merge_round

TOKENS = ("[CLS]", "a", "b", "[SEP]")
LABEL_COLUMNS = ["map_id", "label", "source", "annotator", "labelled_on"]


def _folder(root: Path, ids: list[str], stratum: str, probability: float | None) -> Path:
    root.mkdir()
    maps = {i: LabelledMap(np.full((4, 4), 0.25, dtype=np.float32), TOKENS) for i in ids}
    write_map_set(root / "maps.npz", maps)
    rows = pd.DataFrame(
        [(i, "finetuned", "mrpc", n, 1, 1, 4, "vertical", 1, stratum) for n, i in enumerate(ids)],
        columns=list(SAMPLE_COLUMNS),
    )
    if probability is not None:
        rows["inclusion_probability"] = probability
    rows.to_csv(root / "sample.csv", index=False)
    labels = [(i, "vertical", "visual", who, "2026-11-29") for i in ids for who in ("p", "q")]
    pd.DataFrame(labels, columns=LABEL_COLUMNS).to_csv(root / "visual.csv", index=False)
    return root


@pytest.fixture
def folders(tmp_path) -> tuple[Path, Path]:
    label_folder = _folder(tmp_path / "label", ["v1", "v2"], "rule:vertical", None)
    round_folder = _folder(tmp_path / "round", ["v3", "v4"], "call:vertical@abc", 0.5)
    for name in merge_round.KEPT_FILES:
        (round_folder / name).write_text(name)
    return label_folder, round_folder


def test_a_round_joins_its_label_folder(folders):
    label_folder, round_folder = folders
    assert merge_round.main([str(round_folder), "--into", str(label_folder)]) == 0
    sample = pd.read_csv(label_folder / "sample.csv")
    assert sample["map_id"].tolist() == ["v1", "v2", "v3", "v4"]
    assert sample["inclusion_probability"].isna().tolist() == [True, True, False, False]
    assert len(pd.read_csv(label_folder / "visual.csv")) == 8
    assert list(read_map_set(label_folder / "maps.npz")) == ["v1", "v2", "v3", "v4"]
    for source, target in merge_round.KEPT_FILES.items():
        assert (label_folder / target).read_text() == source
    assert (round_folder / "sample.csv").exists()  # the round's folder is left as it was


def test_a_round_merged_twice_or_unlabelled_is_refused_before_any_change(folders, capsys):
    label_folder, round_folder = folders
    merge_round.main([str(round_folder), "--into", str(label_folder)])
    merged = {p.name: p.read_bytes() for p in label_folder.iterdir()}
    with pytest.raises(SystemExit):
        merge_round.main([str(round_folder), "--into", str(label_folder)])
    assert "already in" in capsys.readouterr().err
    unlabelled = _folder(round_folder.parent / "round2", ["v5", "v6"], "call:vertical@abc", 0.5)
    labels = pd.read_csv(unlabelled / "visual.csv")
    labels[labels["map_id"] != "v6"].to_csv(unlabelled / "visual.csv", index=False)
    for name in merge_round.KEPT_FILES:
        (unlabelled / name).write_text(name)
    with pytest.raises(SystemExit):
        merge_round.main([str(unlabelled), "--into", str(label_folder)])
    assert "map 'v6' has no label" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in label_folder.iterdir()} == merged
