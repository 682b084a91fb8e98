"""The classified maps' class shares, seed stability, special-token columns and Fig. 1's pick."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.apply import (
    ESTIMATED_COLUMNS,
    class_shares,
    load_share_round,
    seed_change,
    share_metrics,
    strongest_is_special,
    vertical_statistics,
)
from pipeline.kovaleva.patterns.cnn import load_classifier
from pipeline.kovaleva.patterns.examples import pick_examples
from pipeline.kovaleva.patterns.mapsets import LabelledMap
from pipeline.kovaleva.patterns.share_estimate import STRATIFIER_FILE
from tests.support.paths import REPO


def test_class_shares_with_intervals_over_examples():
    rng = np.random.default_rng(0)
    rows = []
    for example in range(40):
        for head in range(10):
            label = "vertical" if rng.random() < 0.6 else "heterogeneous"
            second = label if head else "diagonal"  # the second network differs on head 0
            rows.append(("rte", "finetuned", example, 0, head, label, second))
    predictions = pd.DataFrame(
        rows, columns=["task", "variant", "example_id", "layer", "head", "label", "label_seed2"]
    )
    shares = class_shares(predictions, n_resamples=200, seed=0).set_index("class")
    assert shares["share"].sum() == pytest.approx(1.0)
    vertical = shares.loc["vertical"]
    assert vertical["share"] == pytest.approx((predictions["label"] == "vertical").mean())
    assert vertical["ci_low"] < vertical["share"] < vertical["ci_high"]
    assert shares.loc["block", "ci_high"] == 0.0
    assert seed_change(predictions) == pytest.approx(0.1)  # one head in ten moved


def test_the_metrics_hold_the_rules_agreement_and_the_estimated_shares():
    rows = [("rte", "finetuned", "vertical", "vertical")] * 3 + [
        ("rte", "finetuned", "heterogeneous", "vertical"),
        ("rte", "pretrained", "heterogeneous", "block"),
    ]
    predictions = pd.DataFrame(rows, columns=["task", "variant", "rule", "label"])
    predictions["label_seed2"] = predictions["label"]
    empty = pd.DataFrame(columns=["task", "variant", "class", "share", "ci_low", "ci_high"])
    vertical = pd.DataFrame(
        columns=["task", "variant", "statistic", "estimate", "ci_low", "ci_high"]
    )
    estimated = pd.DataFrame(
        [("rte", "finetuned", "first_three", 0.8, 0.7, 0.9, ""),
         ("rte", "finetuned", "block", np.nan, np.nan, np.nan, "no labelled map")],
        columns=list(ESTIMATED_COLUMNS),
    )  # fmt: skip
    metrics = share_metrics(predictions, empty, vertical, estimated)
    assert metrics["rte.finetuned.rule_agreement"] == 0.75
    assert {k: v for k, v in metrics.items() if ".estimated." in k} == {
        "rte.finetuned.estimated.first_three": 0.8,
        "rte.finetuned.estimated.first_three_ci_low": 0.7,
        "rte.finetuned.estimated.first_three_ci_high": 0.9,
    }  # an undefined share has no key


def test_strongest_column_of_hand_built_maps():
    tokens = ["[CLS]", "a", "b", "[SEP]", "c", "[SEP]"]
    n = len(tokens)
    onto = np.zeros((4, n, n))
    onto[0, :, 0] = 1.0  # every query on [CLS]
    onto[1, :, 3] = 1.0  # on the first [SEP]
    onto[2, :, 2] = 1.0  # on the plain token b
    onto[3] = np.eye(n)  # diagonal: all columns tie at 1/n; the first, [CLS], wins
    onto[3, :, 4] += 0.01  # ... unless a plain column is slightly stronger
    assert strongest_is_special(onto, tokens).tolist() == [True, True, False, False]


def test_vertical_margin_and_share_on_special_columns():
    rows = []
    for example in range(30):
        for head in range(10):
            # heads 0-5 vertical, 6-8 heterogeneous, 9 diagonal: margin 0.6 - 0.3 = 0.3
            label = "vertical" if head < 6 else "heterogeneous" if head < 9 else "diagonal"
            special = head < 4 if example % 2 else head < 2  # 4/6 or 2/6 of vertical maps
            rows.append(("mrpc", "pretrained", example, 0, head, label, special))
    # a second cell where diagonal leads: a negative margin, and no vertical map at all
    for example in range(30):
        for head in range(4):
            label = "diagonal" if head < 3 else "heterogeneous"
            rows.append(("mrpc", "finetuned", example, 0, head, label, True))
    columns = ["task", "variant", "example_id", "layer", "head", "label", "strongest_special"]
    predictions = pd.DataFrame(rows, columns=columns)
    table = vertical_statistics(predictions, n_resamples=200, seed=0)
    stats = table.set_index(["variant", "statistic"])
    margin = stats.loc[("pretrained", "vertical_margin")]
    assert margin["estimate"] == pytest.approx(0.3)
    assert margin["ci_low"] == pytest.approx(0.3) and margin["ci_high"] == pytest.approx(0.3)
    on_special = stats.loc[("pretrained", "vertical_on_special")]
    assert on_special["estimate"] == pytest.approx(0.5)  # (4 + 2) / (6 + 6) on average
    assert on_special["maps"] == 30 * 6
    assert on_special["ci_low"] < 0.5 < on_special["ci_high"]  # examples differ: 1/3 or 2/3
    assert stats.loc[("finetuned", "vertical_margin"), "estimate"] == pytest.approx(-0.75)
    assert np.isnan(stats.loc[("finetuned", "vertical_on_special"), "estimate"])


def test_fig1_picks_an_agreed_confident_short_map():
    tokens = tuple(["[CLS]", *["w"] * 3, "[SEP]"])
    long_tokens = tuple(["[CLS]", *["w"] * 50, "[SEP]"])
    maps = {
        "a": LabelledMap(np.eye(5, dtype=np.float32), tokens),
        "b": LabelledMap(np.eye(5, dtype=np.float32), tokens),
        "c": LabelledMap(np.eye(52, dtype=np.float32), long_tokens),
        "d": LabelledMap(np.eye(5, dtype=np.float32), tokens),
    }
    out_of_fold = pd.DataFrame(
        {
            "map_id": ["a", "b", "c", "d"],
            "agreed": [True, True, True, False],
            "visual": ["diagonal"] * 4,
            "cnn": ["diagonal", "diagonal", "diagonal", "diagonal"],
            "confidence": [0.7, 0.8, 0.99, 0.95],
        }
    )
    picks = pick_examples(out_of_fold, maps)
    assert picks["map_id"].tolist() == ["b"]  # agreed, short, then the most confident


def test_the_share_round_is_loaded_only_where_a_stratifier_reads_the_runs_maps(tmp_path):
    """MiniLM's label folder holds round 7 and its stratifier; a folder without one has no
    round; a stratifier that reads maps of another size than the run's classifier is
    refused in one line naming the settings."""
    folder = REPO / "data" / "annotations" / "minilm_l6"
    stratifier = load_classifier(folder / STRATIFIER_FILE)
    found = load_share_round(folder, stratifier)
    assert len(found.labelled) == 240 and set(found.labelled["call"]) <= set(CLASSES)
    assert load_share_round(tmp_path, stratifier) is None
    other = dataclasses.replace(stratifier, input_size=stratifier.input_size * 2)
    with pytest.raises(PipelineError, match=r"set patterns\.classifier\.input_size"):
        load_share_round(folder, other)
