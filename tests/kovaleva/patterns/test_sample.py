"""The sampler of maps to label: even splits, strata, boundaries, already-sampled maps."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns.sample import (
    draw,
    even_split,
    nearest,
    next_ids,
    parse_boundary,
    unsampled,
)


def test_even_split_and_next_ids():
    assert even_split(10, [5, 5, 5]) == [4, 3, 3]
    assert even_split(10, [1, 20, 20]) == [1, 5, 4]
    assert even_split(50, [3, 4]) == [3, 4]  # capped by what the cells hold
    assert next_ids(["v0007", "v0420"], 2) == ["v0421", "v0422"]


def test_sampler_spreads_each_rule_class_over_cells_and_is_seeded():
    rows = [
        (variant, task, example, 0, head, 10, rule)
        for variant in ("pretrained", "finetuned")
        for task in ("mrpc", "rte")
        for example in range(20)
        for head, rule in enumerate(["vertical", "vertical", "heterogeneous", "block"])
    ]
    catalogue = pd.DataFrame(
        rows, columns=["variant", "task", "example_id", "layer", "head", "length", "rule"]
    )
    chosen = draw(catalogue, ["block", "vertical"], 12, seed=3)
    assert chosen["rule"].value_counts().to_dict() == {"block": 12, "vertical": 12}
    per_cell = chosen[chosen["rule"] == "block"].groupby(["variant", "task"]).size()
    assert per_cell.tolist() == [3, 3, 3, 3]
    assert not chosen.duplicated(["variant", "task", "example_id", "layer", "head"]).any()
    pd.testing.assert_frame_equal(chosen, draw(catalogue, ["block", "vertical"], 12, seed=3))
    assert not chosen.equals(draw(catalogue, ["block", "vertical"], 12, seed=4))


def test_sampler_draws_by_another_stratum_and_skips_sampled_maps():
    rows = [
        (variant, "mrpc", example, 0, head, 10, "vertical", stratum)
        for variant in ("pretrained", "finetuned")
        for example in range(10)
        for head, stratum in enumerate(["seeds_disagree", "", "block_candidate"])
    ]
    catalogue = pd.DataFrame(
        rows,
        columns=["variant", "task", "example_id", "layer", "head", "length", "rule", "stratum"],
    )
    # heads 1 and 3 (from 1) of example 0, pretrained, were labelled before
    sampled = pd.DataFrame(
        {"map_id": ["v0001", "v0002"], "variant": "pretrained", "task": "mrpc"}
        | {"example_id": 0, "layer": 1, "head": [1, 3]}
    )
    fresh = unsampled(catalogue, sampled)
    assert len(fresh) == len(catalogue) - 2
    chosen = draw(fresh, ["seeds_disagree"], 19, seed=0, by="stratum")
    assert (chosen["stratum"] == "seeds_disagree").all() and len(chosen) == 19
    assert chosen.groupby("variant").size().to_dict() == {"finetuned": 10, "pretrained": 9}


def test_boundary_draw_takes_the_least_sure_maps_of_each_boundary():
    # two cells; in each, maps whose two most probable types are (vertical, vertical+diagonal)
    # in either order, with gaps 0.0, 0.1, ..., and maps of another boundary with gap 0
    rows = []
    for variant in ("pretrained", "finetuned"):
        for example in range(6):
            first, second = ("vertical", "vertical+diagonal")[:: 1 if example % 2 else -1]
            rows.append((variant, "rte", example, 0, 0, 9, "vertical", first, second, example / 10))
            rows.append((variant, "rte", example, 0, 1, 9, "diagonal", "diagonal", "block", 0.0))
    columns = ["variant", "task", "example_id", "layer", "head", "length", "rule"]
    catalogue = pd.DataFrame(rows, columns=[*columns, "first", "second", "gap"])
    chosen = nearest(catalogue, ["vertical|vertical+diagonal"], 5, seed=0)
    assert (chosen["stratum"] == "boundary:vertical|vertical+diagonal").all()
    assert (chosen["head"] == 0).all()  # never a map of another boundary, however close
    by_cell = chosen.groupby("variant")["gap"].apply(sorted).to_dict()
    assert sorted(map(len, by_cell.values())) == [2, 3]  # spread over the two cells
    for gaps in by_cell.values():  # the smallest gaps of each cell
        assert gaps == pytest.approx([i / 10 for i in range(len(gaps))])
    for bad in ("vertical", "vertical|vertical", "vertical|stripes"):
        with pytest.raises(PipelineError, match=f"boundary '{re.escape(bad)}'"):
            parse_boundary(bad)
