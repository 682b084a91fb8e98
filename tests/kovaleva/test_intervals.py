"""95% bootstrap intervals of the Kovaleva et al. numbers: Table 1 (regimes and their paired
differences), Fig. 5 (per-layer cosine, `last_two_margin`), Figs. 6-7 (token-type means) and
Fig. 3 (FrameNet head scores, `top1_over_median` with the best head re-chosen)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.attention.store import AttentionStore, TokenInfo
from pipeline.attention.store_writer import write_attention
from pipeline.core.errors import PipelineError
from pipeline.core.schema import load_task
from pipeline.core.stage import StageRun
from pipeline.core.stats import bootstrap_interval
from pipeline.kovaleva.framenet import top_over_median
from pipeline.kovaleva.table1 import task_rows
from pipeline.kovaleva.tables import (
    cosine_summary,
    example_cosines,
    head_interval_frame,
    last_two_margin,
    layer_interval_frame,
)
from stages import table1 as table1_stage
from tests.support.builders import drawn


def widths(table: pd.DataFrame, column: str) -> pd.Series:
    return table[f"{column}_ci_high"] - table[f"{column}_ci_low"]


def test_mean_intervals_contain_the_estimate_and_shrink_with_more_examples():
    rng = np.random.default_rng(0)
    few, many = rng.normal(0.5, 0.1, (20, 2, 3)), rng.normal(0.5, 0.1, (2000, 2, 3))
    small = head_interval_frame(few, "score", n_resamples=300, seed=1)
    large = head_interval_frame(many, "score", n_resamples=300, seed=1)
    for table in (small, large):
        assert (table["score_ci_low"] < table["score"]).all()
        assert (table["score"] < table["score_ci_high"]).all()
    np.testing.assert_allclose(small["score"], few.mean(axis=0).ravel())
    assert (widths(large, "score") < widths(small, "score") / 4).all()  # ~ 1 / sqrt(N)
    by_layer = layer_interval_frame(few, "score", n_resamples=300, seed=1)
    np.testing.assert_allclose(by_layer["score"], few.mean(axis=(0, 2)))
    assert (by_layer["score_ci_low"] < by_layer["score"]).all()


def test_examples_without_the_type_are_left_out_of_the_mean_and_interval():
    scores = np.array([[[0.2]], [[np.nan]], [[0.4]], [[np.nan]]])  # [N=4, L=1, H=1]
    table = head_interval_frame(scores, "score", n_resamples=200, seed=0)
    row = table.iloc[0]
    assert row["score"] == pytest.approx(0.3) and row["examples"] == 2
    assert row["score_ci_low"] == pytest.approx(0.2) and row["score_ci_high"] == pytest.approx(0.4)


PREDICTIONS = {
    "mrpc": pd.DataFrame(
        {
            "idx": range(8),
            "label": [1, 1, 1, 1, 0, 0, 0, 0],
            "pretrained": [1, 1, 1, 1, 1, 1, 1, 1],
            "random_init": [1, 1, 0, 0, 1, 0, 0, 0],
            "finetuned": [1, 1, 1, 0, 0, 0, 0, 1],
        }
    ),
    "stsb": pd.DataFrame(
        {
            "idx": range(5),
            "label": [0.0, 1.0, 2.0, 3.0, 4.0],
            "pretrained": [2.0, 1.0, 2.0, 1.0, 2.0],
            "random_init": [0.0, 2.0, 1.0, 3.0, 4.0],
            "finetuned": [0.0, 1.0, 2.0, 4.0, 3.0],
        }
    ),
}


def hand_scores() -> dict[tuple[str, str], dict[str, float]]:
    """Each metric of the hand-made predictions, computed by hand."""
    return {
        ("mrpc", "accuracy"): {"pretrained": 4 / 8, "random_init": 5 / 8, "finetuned": 6 / 8},
        # F1 = 2 tp / (2 tp + fp + fn): pretrained tp 4 fp 4; random tp 2 fp 1 fn 2;
        # finetuned tp 3 fp 1 fn 1
        ("mrpc", "f1"): {"pretrained": 8 / 12, "random_init": 4 / 7, "finetuned": 6 / 8},
        ("stsb", "pearson"): {
            r: float(np.corrcoef(PREDICTIONS["stsb"]["label"], PREDICTIONS["stsb"][r])[0, 1])
            for r in ("pretrained", "random_init", "finetuned")
        },
        # Spearman of untied ranks: 1 - 6 sum d^2 / (n (n^2 - 1)), n = 5 -> 1 - sum d^2 / 20;
        # pretrained ranks tie: its Spearman is the Pearson of mid-ranks [4, 1.5, 4, 1.5, 4]
        ("stsb", "spearman"): {
            "pretrained": float(np.corrcoef(range(5), [4, 1.5, 4, 1.5, 4])[0, 1]),
            "random_init": 1 - 2 / 20,
            "finetuned": 1 - 2 / 20,
        },
    }


# The best constant prediction: MRPC's labels tie 4-4, so the first class (0) is predicted:
# accuracy 1/2, F1 of a constant negative 0; a constant score has correlation 0.
CHANCE_SCORES = {
    ("mrpc", "accuracy"): 0.5,
    ("mrpc", "f1"): 0.0,
    ("stsb", "pearson"): 0.0,
    ("stsb", "spearman"): 0.0,
}


def run_table1(root: Path, tasks: list[str], written: list[str], seed: int = 7) -> None:
    """The table1 stage for fine-tuning seed 8 (the primary seed is `seed`) over `tasks`, with
    hand-made predictions files of seed 8 for `written`."""
    for task in written:
        path = root / "plots" / "finetune" / task / "seed8" / "predictions.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        PREDICTIONS[task].to_csv(path, index=False)
    cfg = OmegaConf.create(
        {
            "paths": {"outputs": str(root)},
            "tasks": tasks,
            "seed": seed,
            "seeds": [seed, 8],
            "model": {"name": "m"},
            "table1": {"bootstrap_resamples": 200},
        }
    )
    table1_stage.run(StageRun(cfg, root, under_dvc=True, seed_item=8))


def test_table1_on_hand_made_predictions_equals_a_hand_computation(tmp_path):
    run_table1(tmp_path, ["mrpc", "stsb"], written=["mrpc", "stsb"])
    every = pd.read_csv(tmp_path / "plots" / "table1" / "seed8" / "table1_all_metrics.csv")
    assert every[["task", "metric"]].values.tolist() == [
        ["mrpc", "accuracy"],
        ["mrpc", "f1"],
        ["stsb", "pearson"],
        ["stsb", "spearman"],
    ]
    rows = every.set_index(["task", "metric"])
    for key, scores in hand_scores().items():
        row = rows.loc[key]
        for regime, score in scores.items():
            assert row[regime] == pytest.approx(score, abs=1e-6), (key, regime)
            assert row[f"{regime}_ci_low"] <= row[regime] <= row[f"{regime}_ci_high"]
        ahead = scores["finetuned"] - scores["random_init"]
        assert row["finetuned_minus_random_init"] == pytest.approx(ahead, abs=1e-6)
        behind = scores["random_init"] - scores["pretrained"]
        assert row["random_init_minus_pretrained"] == pytest.approx(behind, abs=1e-6)
        learned = scores["finetuned"] - scores["pretrained"]
        assert row["finetuned_minus_pretrained"] == pytest.approx(learned, abs=1e-6)
        assert row["finetuned_minus_chance"] == pytest.approx(
            scores["finetuned"] - CHANCE_SCORES[key], abs=1e-6
        )
        assert row["chance"] == pytest.approx(CHANCE_SCORES[key], abs=1e-6)
    main = pd.read_csv(tmp_path / "plots" / "table1" / "seed8" / "table1.csv")
    assert main[["task", "metric"]].values.tolist() == [["mrpc", "accuracy"], ["stsb", "pearson"]]
    flat = json.loads((tmp_path / "metrics" / "table1" / "seed8.json").read_text())
    assert flat["mrpc.random_init"] == pytest.approx(5 / 8)
    assert flat["mrpc.random_init_minus_pretrained"] == pytest.approx(1 / 8)
    assert flat["mrpc.finetuned_minus_random_init"] == pytest.approx(1 / 8)
    assert flat["mrpc.examples"] == 8
    names = [
        f"{task}.{name}{suffix}"
        for task in ("mrpc", "stsb")
        for name in (
            "pretrained",
            "random_init",
            "finetuned",
            "chance",
            "finetuned_minus_random_init",
            "random_init_minus_pretrained",
            "finetuned_minus_pretrained",
            "finetuned_minus_chance",
        )
        for suffix in ("", "_ci_low", "_ci_high")
    ]
    assert sorted(flat) == sorted([*names, "mrpc.examples", "stsb.examples"])
    assert drawn(tmp_path / "figures" / "table1" / "seed8" / "table1.png").startswith(
        "Table 1: dev score of each task's main metric"
    )


def test_table1_names_the_missing_predictions_file(tmp_path):
    with pytest.raises(PipelineError, match=r"rte/seed8/predictions.csv not found.*finetune"):
        run_table1(tmp_path, ["mrpc", "rte"], written=["mrpc"])


def test_the_paired_difference_of_identical_predictions_is_exactly_zero():
    rng = np.random.default_rng(3)
    labels, same = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    frame = pd.DataFrame(
        {"idx": range(40), "label": labels, "pretrained": 1 - same, "random_init": same}
    ).assign(finetuned=same)
    (row, f1_row) = task_rows(load_task("mrpc"), frame, n_resamples=200, seed=0)
    for metric_row in (row, f1_row):
        assert metric_row["finetuned_minus_random_init"] == 0.0
        assert metric_row["finetuned_minus_random_init_ci_low"] == 0.0
        assert metric_row["finetuned_minus_random_init_ci_high"] == 0.0
    assert row["random_init_minus_pretrained_ci_high"] > row["random_init_minus_pretrained_ci_low"]


def map_of(n: int, focus: int) -> np.ndarray:
    """An [n, n] map: every query attends to key `focus`."""
    out = np.zeros((n, n), np.float32)
    out[:, focus] = 1.0
    return out


def margin_store(path: Path, changed_layers: list[int], rng: np.random.Generator) -> np.ndarray:
    """Per-example cosines [N, L=4, H=1] of a store whose fine-tuned maps differ from the
    pre-trained ones (all to [CLS]) in `changed_layers` (by a random mix toward [SEP])."""
    n, records = 5, []
    info = TokenInfo(
        ["[CLS]", "a", "b", "c", "[SEP]"],
        np.zeros(n, int),
        np.array([-1, 0, 1, 2, -1]),
        np.zeros((n, 2), int),
        ("a b c",),
    )
    for example in range(12):
        before = np.stack([map_of(n, 0)[None]] * 4)  # [L=4, H=1, n, n]
        after = before.copy()
        for layer in changed_layers:
            mix = rng.uniform(0.5, 0.9)
            after[layer, 0] = (1 - mix) * map_of(n, 0) + mix * map_of(n, n - 1)
        records += [("pretrained", "rte", example, before, info)]
        records += [("finetuned", "rte", example, after, info)]
    records.sort(key=lambda record: record[:3])  # the store's order: variant, task, example
    write_attention(path, records, model_id="m", num_layers=4, num_heads=1, config_hash="t")
    store = AttentionStore(path, expect_model="m")
    return example_cosines(store, "rte", list(range(12)), chunk=5)


@pytest.mark.parametrize(("changed", "sign"), [([2, 3], 1.0), ([0, 1], -1.0)])
def test_last_two_margin_is_positive_only_when_the_last_layers_change_most(tmp_path, changed, sign):
    scores = margin_store(tmp_path / "s.parquet", changed, np.random.default_rng(0))
    summary = cosine_summary(scores, n_resamples=300, seed=0)
    margin = summary.margin
    assert margin.estimate == pytest.approx(last_two_margin(scores.mean(axis=-1)))
    assert np.sign(margin.estimate) == sign
    assert margin.excludes(0.0) and margin.low <= margin.estimate <= margin.high
    unchanged = summary.layers.set_index("layer").drop(index=changed)
    np.testing.assert_allclose(unchanged["cosine"], 1.0, rtol=1e-6)
    assert (unchanged["cosine_ci_low"] > 0.999).all()


def test_top1_over_median_rechooses_the_best_head_in_every_resample():
    scores = np.array([[0.2, 0.1, 0.3], [0.4, 0.1, 0.1], [0.3, 0.1, 0.2]])  # [N=3, K=3]
    assert top_over_median(scores) == pytest.approx(0.3 / 0.2)  # means 0.3, 0.1, 0.2
    rng = np.random.default_rng(0)
    equal = rng.normal(1.0, 0.3, (30, 12))  # 12 heads of one true mean: no head stands out
    rechosen = bootstrap_interval(top_over_median, equal, n_resamples=400, seed=0)
    best = int(np.argmax(equal.mean(axis=0)))
    fixed = bootstrap_interval(
        lambda s: s[:, best].mean() / np.median(s.mean(axis=0)), equal, n_resamples=400, seed=0
    )
    assert rechosen.estimate == pytest.approx(fixed.estimate)  # the same head on the full data
    assert rechosen.low > fixed.low  # a fixed head regresses to the mean; the re-chosen can't
    assert rechosen.low >= 1.0  # the best of the resample is never below its median


def test_last_two_margin_by_hand():
    """Layer cosines 0.9, 0.8, 0.95, 0.7, 0.6 (two examples around each): changes 0.1, 0.2,
    0.05, 0.3, 0.4, so the margin is min(0.3, 0.4) - max(0.1, 0.2, 0.05) = 0.1 (a mean of
    the last two, 0.35, would give 0.15; a mean of the others, 0.1167, 0.1833)."""
    cosines = np.array([0.9, 0.8, 0.95, 0.7, 0.6])
    by_layer = np.stack([cosines + 0.02, cosines - 0.02])  # [N=2, L=5]
    assert last_two_margin(by_layer) == pytest.approx(0.1)
