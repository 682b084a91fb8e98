"""The labelling round's benchmark (benchmarks/pattern_round.py): which maps are the round's,
the labelled set without them, and the benchmarks page showing its kept record."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.pattern_round import NEW_ROUNDS, in_new_round, round_table, without
from pipeline.kovaleva.patterns.train import LabelledSet
from tests.support.paths import REPO


def labelled_set() -> LabelledSet:
    """Six maps of two folders; the third and the sixth are of their folder's new round."""
    folders = ("minilm_l6", "mpnet_base")
    origin = pd.DataFrame(
        {
            "labels_from": [folders[0]] * 3 + [folders[1]] * 3,
            "map_id": [f"{f}/v{i}" for f in folders for i in range(3)],
            "round": [1, 2, NEW_ROUNDS[folders[0]], 1, 1, NEW_ROUNDS[folders[1]]],
            "label": ["vertical", "diagonal", "vertical+diagonal"] * 2,
        }
    )
    all_labels = pd.DataFrame({"map_id": np.repeat(origin["map_id"], 2), "annotator": "a"})
    return LabelledSet(origin, [f"map {i}" for i in range(6)], all_labels, folders)


def test_the_new_round_is_each_folders_own_round() -> None:
    assert in_new_round(labelled_set()).tolist() == [False, False, True, False, False, True]


def test_without_the_round_the_other_maps_keep_their_order_and_labels() -> None:
    labelled = labelled_set()
    before = without(labelled, in_new_round(labelled))
    assert before.maps == ["map 0", "map 1", "map 3", "map 4"]
    assert before.origin["map_id"].tolist() == [
        "minilm_l6/v0", "minilm_l6/v1", "mpnet_base/v0", "mpnet_base/v1"
    ]  # fmt: skip
    assert before.labels.tolist() == ["vertical", "diagonal", "vertical", "diagonal"]
    assert set(before.all_labels["map_id"]) == set(before.origin["map_id"])


def test_the_benchmarks_page_shows_the_rounds_record() -> None:
    assert round_table() in (REPO / "docs/benchmarks.md").read_text()
