"""Shares from a round drawn to measure them (pipeline/kovaleva/patterns/share_estimate.py):
a hand-computed estimate, undefined cells, examples as clusters, sums of types from the
same resamples, and the transport assumption's check (the interval's coverage on simulated
runs and rounds: test_share_simulation.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.design import CALL
from pipeline.kovaleva.patterns.share_estimate import (
    estimate_shares,
    round_labels,
    transport_check,
)

V, D, VD, B, H = CLASSES
FIRST_THREE = [V, D, VD]


def _predictions(cells: dict[tuple[str, str], list[list[str]]]) -> pd.DataFrame:
    """One row per map: cells map to their examples' calls."""
    rows = [
        (task, variant, example, call)
        for (task, variant), examples in cells.items()
        for example, calls in enumerate(examples)
        for call in calls
    ]
    return pd.DataFrame(rows, columns=["task", "variant", "example_id", CALL])


def _labelled(pairs: list[tuple[str, str]], task: str = "a") -> pd.DataFrame:
    return pd.DataFrame(
        {"task": task, "variant": "finetuned", "call": [c for c, _ in pairs],
         "label": [t for _, t in pairs]}
    )  # fmt: skip


LABELLED = _labelled([(V, V), (V, V), (V, V), (V, H), (H, H), (H, D)])


def test_the_estimate_is_the_hand_computed_sum_over_strata():
    """Cell a: 5 maps called vertical, 3 heterogeneous (W = 5/8, 3/8); P(. | vertical) =
    3/4 vertical, 1/4 heterogeneous; P(. | heterogeneous) = 1/2 heterogeneous, 1/2 diagonal.
    Cell b: vertical calls only."""
    predictions = _predictions(
        {("a", "finetuned"): [[V, V, V, H], [V, V, H, H]], ("b", "finetuned"): [[V, V], [V]]}
    )
    table = estimate_shares(predictions, LABELLED, n_resamples=200).table()
    a = table[table["task"] == "a"].set_index("type")["share"]
    assert a[V] == pytest.approx(5 / 8 * 3 / 4)
    assert a[H] == pytest.approx(5 / 8 * 1 / 4 + 3 / 8 * 1 / 2)
    assert a[D] == pytest.approx(3 / 8 * 1 / 2)
    assert a[VD] == 0 and a[B] == 0
    b = table[table["task"] == "b"].set_index("type")["share"]
    assert b[V] == pytest.approx(3 / 4) and b[H] == pytest.approx(1 / 4)
    assert table.groupby("task")["share"].sum().to_numpy() == pytest.approx([1, 1])
    assert (table["ci_low"] >= 0).all() and (table["ci_high"] <= 1).all()
    assert (table["ci_low"] <= table["share"]).all() and (table["share"] <= table["ci_high"]).all()


def test_a_stratum_without_labels_leaves_only_the_cells_with_its_maps_undefined():
    predictions = _predictions({("a", "finetuned"): [[V, H]], ("b", "finetuned"): [[V, V]]})
    labelled = _labelled([(V, V), (V, H)])
    table = estimate_shares(predictions, labelled, n_resamples=50).table()
    a, b = (table[table["task"] == t] for t in ("a", "b"))
    assert a[["share", "ci_low", "ci_high"]].isna().all().all()
    assert set(a["reason"]) == {
        "no labelled map in stratum heterogeneous, which holds the cell's maps"
    }
    assert b["share"].notna().all() and set(b["reason"]) == {""}  # W_bh = 0: defined


def test_examples_are_resampled_as_clusters():
    """The same 20 x 4 calls, 200 labelled maps per call that all agree with it: spread
    evenly over the examples, every resample has the same W, and the width is the labels'
    alone (about 0.02); one call per example, the vertical share is a binomial proportion
    over 20 examples (95% width about 0.44)."""
    labelled = _labelled([(V, V)] * 200 + [(H, H)] * 200)
    spread = _predictions({("a", "finetuned"): [[V, V, H, H]] * 20})
    clustered = _predictions({("a", "finetuned"): [[V] * 4] * 10 + [[H] * 4] * 10})
    widths = []
    for predictions in (spread, clustered):
        row = estimate_shares(predictions, labelled, n_resamples=2000).table().iloc[0]
        assert row["type"] == V and row["share"] == pytest.approx(0.5)
        widths.append(row["ci_high"] - row["ci_low"])
    assert widths[0] < 0.03
    assert 0.35 <= widths[1] <= 0.5


def test_a_type_no_labelled_map_showed_keeps_some_width():
    """20 maps called heterogeneous, all labelled heterogeneous: block's share is 0, and its
    interval still reaches above 0 (the Dirichlet draw's prior), where a plain resample of
    the labels gave [0, 0] whatever the round missed."""
    labelled = _labelled([(H, H)] * 20)
    predictions = _predictions({("a", "finetuned"): [[H] * 4] * 10})
    row = estimate_shares(predictions, labelled, n_resamples=2000).table().set_index("type")
    assert row.loc[B, "share"] == 0 and row.loc[B, "ci_low"] == 0
    assert 0.0 < row.loc[B, "ci_high"] < 0.15
    assert (row["ci_low"] <= row["share"]).all() and (row["share"] <= row["ci_high"]).all()


def test_a_sum_of_types_takes_its_interval_from_the_same_resamples():
    predictions = _predictions({("a", "finetuned"): [[V, V, H, VD], [V, D, H, H], [V, V, V]]})
    labelled = _labelled([(V, V), (V, H), (V, VD), (H, H), (H, D), (VD, VD), (D, D)])
    found = estimate_shares(predictions, labelled, n_resamples=500, seed=3)
    every = found.sum_of(list(CLASSES), "all").iloc[0]
    assert (every["share"], every["ci_low"], every["ci_high"]) == pytest.approx((1, 1, 1))
    three = found.sum_of(FIRST_THREE, "first_three").iloc[0]
    table = found.table().set_index("type")
    assert three["share"] == pytest.approx(table.loc[FIRST_THREE, "share"].sum())
    assert (
        three["ci_high"] - three["ci_low"]
        < (table.loc[FIRST_THREE, "ci_high"] - table.loc[FIRST_THREE, "ci_low"]).sum()
    )


def test_the_bootstrap_is_seeded():
    predictions = _predictions({("a", "finetuned"): [[V, H], [V, V], [H, H]]})
    first, second, other = (
        estimate_shares(predictions, LABELLED, n_resamples=100, seed=s).draws for s in (7, 7, 8)
    )
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_the_round_labels_come_from_the_strata_of_one_stratifier():
    sample = pd.DataFrame(
        {"map_id": ["v1", "v2", "v3"], "task": "a", "variant": "finetuned",
         "stratum": [f"call:{V}@abc123", f"call:{H}@abc123", f"call:{V}@abc123"]}
    )  # fmt: skip
    resolved = pd.DataFrame({"map_id": ["v1", "v2"], "label": [H, H]})
    found = round_labels(sample, resolved)
    assert found[["map_id", "call", "label"]].values.tolist() == [["v1", V, H], ["v2", H, H]]
    two = sample.assign(stratum=[f"call:{V}@abc123", f"call:{H}@def456", f"call:{V}@abc123"])
    with pytest.raises(PipelineError, match="one frozen stratifier"):
        round_labels(two, resolved)
    with pytest.raises(PipelineError, match=r"'rule:vertical' of map 'v3'.*patterns_round"):
        round_labels(sample.assign(stratum=[*sample["stratum"][:2], "rule:vertical"]), resolved)
    with pytest.raises(PipelineError, match="map 'v9' is not in the round's sample"):
        round_labels(sample, pd.DataFrame({"map_id": ["v9"], "label": [V]}))


def test_bad_input_is_named_with_its_fix():
    predictions = _predictions({("a", "finetuned"): [[V, "columnar"]]})
    with pytest.raises(PipelineError, match=r"column 'call' holds \['columnar'\]"):
        estimate_shares(predictions, LABELLED)
    with pytest.raises(PipelineError, match=r"column 'label' holds \['stripes'\]"):
        estimate_shares(predictions.iloc[:1], LABELLED.assign(label=[V] * 5 + ["stripes"]))
    with pytest.raises(PipelineError, match="predictions: no maps"):
        estimate_shares(predictions.iloc[:0], LABELLED)
    found = estimate_shares(predictions.iloc[:1], LABELLED, n_resamples=10)
    with pytest.raises(PipelineError, match=r"unknown types \['verticle'\]"):
        found.sum_of(["verticle"], "typo")


def _stratum(task: str, counts: dict[str, int], call: str = V) -> pd.DataFrame:
    return _labelled([(call, t) for t, n in counts.items() for _ in range(n)], task)


def test_the_transport_check_finds_a_planted_difference_between_tasks_and_no_null_one():
    """Three tasks' vertical strata: alike (48 vertical, 12 heterogeneous each), or one task
    with half its maps heterogeneous; the heterogeneous stratum holds one task's maps."""
    alike = [_stratum(t, {V: 48, H: 12}) for t in ("a", "b", "c")]
    planted = [*alike[:2], _stratum("c", {V: 30, H: 30}), _stratum("a", {H: 5}, call=H)]
    found_null = transport_check(pd.concat(alike)).set_index("call")
    found = transport_check(pd.concat(planted)).set_index("call")
    assert found_null.loc[V, "p_value"] > 0.5
    assert found.loc[V, "p_value"] < 0.01
    assert (found.loc[V, "maps"], found.loc[V, "groups"]) == (180, 3)
    assert found.loc[H, "note"] == "fewer than two groups" and np.isnan(found.loc[H, "p_value"])
    by_variant = transport_check(pd.concat(planted), by="variant").set_index("call")
    assert by_variant.loc[V, "note"] == "fewer than two groups"


def test_a_type_a_tasks_inputs_cannot_show_is_a_structural_zero_there_alone():
    """Called vertical: 2 vertical, 1 block, 1 heterogeneous by eye. Task one (one sentence,
    block impossible): P(. | vertical) = 2/3 vertical, 1/3 heterogeneous; task two keeps
    1/2, 1/4, 1/4; a stratum whose labelled maps are all block leaves task one undefined."""
    labelled = _labelled([(V, V), (V, V), (V, B), (V, H)])
    predictions = _predictions({("one", "finetuned"): [[V, V]], ("two", "finetuned"): [[V]]})
    found = estimate_shares(
        predictions, labelled, n_resamples=200, impossible={"one": ("block",)}
    ).table()
    one = found[found["task"] == "one"].set_index("type")
    two = found[found["task"] == "two"].set_index("type")["share"]
    assert one.loc[V, "share"] == pytest.approx(2 / 3) and one.loc[B, "share"] == 0
    assert one.loc[B, "ci_high"] == 0  # no resample gives it block either
    assert (two[V], two[B], two[H]) == pytest.approx((1 / 2, 1 / 4, 1 / 4))
    blocks = _labelled([(V, V), (H, B)])
    predictions = _predictions({("one", "finetuned"): [[V, H]]})
    empty = estimate_shares(predictions, blocks, impossible={"one": ("block",)}).table()
    assert empty["share"].isna().all()
    assert "every labelled map of stratum heterogeneous" in empty["reason"].iloc[0]
