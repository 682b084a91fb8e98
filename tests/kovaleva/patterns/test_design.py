"""A round drawn to measure shares: Neyman sizes within floors and capacities, the planned
half-widths' formula, and draws at random within each call with their inclusion
probabilities (pipeline/kovaleva/patterns/design.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.design import (
    CALL,
    call_counts,
    draw_by_call,
    half_widths,
    plan_sizes,
    planning_guess,
)

V, D, VD, B, H = CLASSES


def _frame() -> pd.DataFrame:
    """Two tasks, fine-tuned: 60 maps each, called vertical (40), heterogeneous (15),
    block (5)."""
    calls = [V] * 40 + [H] * 15 + [B] * 5
    return pd.DataFrame(
        {
            "task": ["a"] * 60 + ["b"] * 60,
            "variant": "finetuned",
            "example_id": list(range(60)) * 2,
            CALL: calls * 2,
        }
    )


def test_counts_are_per_cell_and_call_with_every_type_a_column():
    counts = call_counts(_frame())
    assert list(counts.columns) == list(CLASSES)
    assert counts.loc[("a", "finetuned")].to_dict() == {V: 40, D: 0, VD: 0, B: 5, H: 15}


def test_the_half_width_is_the_stratified_formula():
    weights = pd.DataFrame({V: [0.75], H: [0.25]}, index=["a"])
    p = pd.DataFrame({V: [0.9, 0.2], H: [0.1, 0.8]}, index=[V, H])
    found = half_widths(weights, p, {V: 10, H: 40}, {"vertical": [V]})
    expected = 1.96 * math.sqrt(0.75**2 * 0.9 * 0.1 / 10 + 0.25**2 * 0.2 * 0.8 / 40)
    assert found.loc["a", "vertical"] == pytest.approx(expected)


def test_sizes_follow_the_scores_within_floor_and_capacity():
    weights = pd.DataFrame({V: [0.7], D: [0.0], VD: [0.0], B: [0.05], H: [0.25]}, index=["a"])
    p = planning_guess([V, V, H, H, B], [V, H, H, V, B])
    sizes = plan_sizes(weights, p, {"h": [H]}, total=60, floor=4, capacity={
        V: 1000, D: 3, VD: 1000, B: 2, H: 1000})  # fmt: skip
    assert sum(sizes.values()) == 60
    assert sizes[B] == 2 and sizes[D] == 3  # capped by what the frame holds
    assert sizes[VD] == 4  # the floor: no weight in the cell, still estimated
    assert sizes[V] > sizes[H]  # more weight, and the target share uncertain in both


def test_a_draw_takes_each_calls_size_at_random_with_its_inclusion_probability():
    frame = _frame()
    chosen = draw_by_call(frame, {V: 8, H: 3, B: 10}, seed=0)
    assert chosen[CALL].value_counts().to_dict() == {V: 8, B: 10, H: 3}
    probability = chosen.groupby(CALL)["inclusion_probability"].first().to_dict()
    assert probability == pytest.approx({V: 8 / 80, H: 3 / 30, B: 10 / 10})
    assert not chosen.duplicated(["task", "example_id"]).any()
    again = draw_by_call(frame, {V: 8, H: 3, B: 10}, seed=0)
    pd.testing.assert_frame_equal(chosen, again)  # seeded
    # at random within the stratum: over many seeds every vertical map is drawn about as
    # often as 8/80 says
    drawn = pd.concat([draw_by_call(frame, {V: 8}, seed=s) for s in range(400)], ignore_index=True)
    per_map = drawn.groupby(["task", "example_id"]).size() / 400
    assert len(per_map) == 80 and np.allclose(per_map, 0.1, atol=0.07)
    # and the order says nothing of the strata: not sorted by call
    assert list(chosen[CALL]) != sorted(chosen[CALL])
