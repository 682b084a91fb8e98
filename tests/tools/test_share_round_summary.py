"""The share round's generated summary: every pair of annotators that share maps is scored
(tools/share_round_summary.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from tools.share_round_summary import pairwise


def test_every_pair_that_shares_maps_is_scored():
    labels = pd.DataFrame(
        {
            "map_id": ["m1", "m2", "m1", "m2", "m3", "m3", "m1"],
            "annotator": ["a", "a", "b", "b", "c", "d", "c"],
            "label": ["vertical", "block", "vertical", "diagonal", "block", "block", "block"],
        }
    )
    found = pairwise(labels).set_index(["first", "second"])
    assert set(found.index) == {("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")}
    assert found.loc[("a", "b"), "maps"] == 2
    assert found.loc[("a", "b"), "agreement"] == pytest.approx(0.5)
    assert found.loc[("c", "d"), "agreement"] == 1.0
