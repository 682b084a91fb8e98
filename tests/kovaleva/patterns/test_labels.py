"""Label files, their resolution to one label a map, agreement and kappa, and label folders
pooled for training."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns.agreement import (
    annotator_agreement,
    kappa,
    raw_agreement,
)
from pipeline.kovaleva.patterns.labels import (
    LABEL_COLUMNS,
    append_label,
    drop_last_label,
    read_label_file,
    read_sample,
    resolve,
)
from pipeline.kovaleva.patterns.mapsets import write_map_set
from pipeline.kovaleva.patterns.train import (
    load_labelled_set,
    recall_by_round,
)
from tests.support.pattern_maps import (
    synthetic_set,
    write_labels_csv,
)


def test_label_file_errors_name_the_line(tmp_path):
    ok = ("v1", "vertical", "visual", "ann", "2026-11-23")
    cases = {
        "unknown class 'stripes'": ("v1", "stripes", "visual", "ann", "d"),
        "rule labels do not belong": ("v1", "vertical", "rule", "ann", "d"),
        "no annotator": ("v1", "vertical", "visual", " ", "d"),
        "map 'v9' is not in": ("v9", "vertical", "visual", "ann", "d"),
    }
    for message, row in cases.items():
        path = write_labels_csv(tmp_path / "labels.csv", [ok, row])
        with pytest.raises(PipelineError, match=message) as error:
            read_label_file(path, ["v1", "v2"])
        assert f"{path}:3" in str(error.value)
    pd.DataFrame({"map_id": ["v1"]}).to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(PipelineError, match="lacks columns"):
        read_label_file(tmp_path / "short.csv", ["v1"])


def labels_frame(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    """(map_id, annotator, label) -> a label frame."""
    return pd.DataFrame(
        [(m, label, "visual", who, "d") for m, who, label in rows], columns=list(LABEL_COLUMNS)
    )


def test_resolution_majority_then_primary_annotator():
    labels = labels_frame(
        [
            ("v1", "a", "vertical"), ("v2", "a", "diagonal"), ("v3", "a", "block"),
            ("v1", "b", "heterogeneous"),  # a tie: the primary annotator (a) wins
            ("v2", "b", "vertical+diagonal"), ("v2", "c", "vertical+diagonal"),  # 2 against 1
            ("v4", "b", "block"), ("v4", "c", "diagonal"),  # a tie without a: the first label
        ]
    )  # fmt: skip
    resolved = resolve(labels).set_index("map_id")
    assert resolved["label"].to_dict() == {
        "v1": "vertical", "v2": "vertical+diagonal", "v3": "block", "v4": "block"
    }  # fmt: skip
    assert resolved["num_labels"].to_dict() == {"v1": 2, "v2": 3, "v3": 1, "v4": 2}
    assert resolved["agreed"].to_dict() == {"v1": False, "v2": False, "v3": True, "v4": False}


def test_agreement_and_kappa_on_hand_made_labels():
    first = ["vertical", "vertical", "diagonal", "diagonal"]
    second = ["vertical", "diagonal", "diagonal", "diagonal"]
    # p_o = 3/4; p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert raw_agreement(first, second) == 0.75
    assert kappa(first, second) == pytest.approx(0.5)
    labels = labels_frame(
        [("v1", "a", "vertical"), ("v2", "a", "vertical"), ("v3", "a", "diagonal"),
         ("v4", "a", "diagonal"), ("v1", "b", "vertical"), ("v2", "b", "diagonal"),
         ("v3", "c", "diagonal"), ("v4", "c", "diagonal")]
    )  # fmt: skip
    table = annotator_agreement(labels).set_index("other")
    assert table.loc["b", "pairs"] == 2 and table.loc["b", "agreement"] == 0.5
    assert table.loc["c", "agreement"] == 1.0
    assert table.loc["any", "pairs"] == 4 and table.loc["any", "agreement"] == 0.75
    assert table.loc["any", "kappa"] == pytest.approx(0.5)


def test_append_and_drop_human_labels(tmp_path):
    path = tmp_path / "human.csv"
    append_label(path, "v1", "block", "ann", "t1", ["v1", "v2"])
    append_label(path, "v2", "diagonal", "ann", "t2", ["v1", "v2"])
    frame = read_label_file(path, ["v1", "v2"])
    assert frame[["map_id", "label", "source"]].values.tolist() == [
        ["v1", "block", "human"], ["v2", "diagonal", "human"]
    ]  # fmt: skip
    assert drop_last_label(path) == "v2"
    assert read_label_file(path, ["v1", "v2"])["map_id"].tolist() == ["v1"]
    with pytest.raises(PipelineError, match="unknown class"):
        append_label(path, "v1", "square", "ann", "t3", ["v1", "v2"])


def write_label_folder(folder: Path, kinds: list[str], rounds: bool) -> None:
    """A label folder of len(kinds) synthetic maps, each labelled as its kind; `rounds`:
    sample.csv with its round and stratum columns (else without, as older folders)."""
    maps, _ = synthetic_set(len(kinds), seed=len(kinds))
    folder.mkdir(parents=True)
    ids = [f"v{i:04d}" for i in range(1, len(kinds) + 1)]
    write_map_set(folder / "maps.npz", dict(zip(ids, maps, strict=True)))
    sample = pd.DataFrame(
        {"map_id": ids, "variant": "finetuned", "task": "rte", "example_id": range(len(ids))}
        | {"layer": 1, "head": 1, "length": [len(m.tokens) for m in maps], "rule": kinds}
    )
    if rounds:
        sample = sample.assign(round=[1] * (len(ids) - 2) + [2, 2], stratum="rule:x")
    sample.to_csv(folder / "sample.csv", index=False)
    rows = [(m, k, "visual", "a", "2026-11-25") for m, k in zip(ids, kinds, strict=True)]
    write_labels_csv(folder / "visual.csv", rows)


def test_label_folders_pool_with_their_names_rounds_and_example_groups(tmp_path):
    write_label_folder(tmp_path / "alpha", ["vertical", "diagonal", "block", "diagonal"], True)
    write_label_folder(tmp_path / "beta", ["vertical", "heterogeneous", "block"], False)
    old = read_sample(tmp_path / "beta" / "sample.csv")  # a file without the new columns
    assert (old["round"] == 1).all() and list(old["stratum"]) == ["rule:vertical", *[
        "rule:heterogeneous", "rule:block"]]  # fmt: skip
    pooled = load_labelled_set([tmp_path / "alpha", tmp_path / "beta"])
    assert list(pooled.origin["map_id"]) == [
        *[f"alpha/v000{i}" for i in range(1, 5)],
        *[f"beta/v000{i}" for i in range(1, 4)],
    ]
    assert list(pooled.origin["round"]) == [1, 1, 2, 2, 1, 1, 1]
    alpha, beta = ["vertical", "diagonal", "block", "diagonal"], ["vertical", "heterogeneous"]
    assert list(pooled.labels) == [*alpha, *beta, "block"]
    assert pooled.folders == ("alpha", "beta") and len(pooled.maps) == 7
    # example 0 of rte in two folders is two inputs (two models' maps), not one group
    assert len(set(pooled.groups)) == 7
    assert set(pooled.all_labels["map_id"]) == set(pooled.origin["map_id"])
    with pytest.raises(PipelineError, match="name each folder once"):
        load_labelled_set([tmp_path / "alpha", tmp_path / "alpha"])


def test_recall_by_round_counts_each_class_of_each_folder_and_round():
    out_of_fold = pd.DataFrame(
        {
            "labels_from": ["a", "a", "a", "a", "b"],
            "round": [1, 1, 2, 2, 1],
            "visual": ["vertical", "vertical", "vertical", "block", "diagonal"],
            "cnn": ["vertical", "diagonal", "vertical", "heterogeneous", "diagonal"],
        }
    )
    table = recall_by_round(out_of_fold).set_index(["labels_from", "round", "class"])
    assert table.loc[("a", 1, "vertical"), ["labelled", "recalled"]].tolist() == [2, 1]
    assert table.loc[("a", 2, "block"), "recall"] == 0.0
    assert table.loc[("a", 2, "all"), "recall"] == 0.5  # the accuracy of the round
    assert table.loc[("b", 1, "diagonal"), "recall"] == 1.0
    assert ("a", 1, "block") not in table.index  # no label of that class in that round
