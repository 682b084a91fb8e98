"""Intervals of Clark et al.'s relation-head and offset accuracies (syntax_report)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import beta

from pipeline.clark.syntax import ALL
from pipeline.clark.syntax_report import relation_metrics, with_intervals


def test_relation_accuracies_get_clopper_pearson_intervals():
    table = pd.DataFrame(
        {
            "relation": ["nsubj", ALL],
            "count": [20, 400],
            "layer": [0, 2],
            "head": [1, 3],
            "head_accuracy": [0.75, 0.5],
            "offset_accuracy": [0.4, 0.3],
        }
    )
    found = with_intervals(table)
    # 15 of 20: the exact bounds are beta quantiles
    assert found["head_ci_low"].iloc[0] == pytest.approx(beta.ppf(0.025, 15, 6))
    assert found["head_ci_high"].iloc[0] == pytest.approx(beta.ppf(0.975, 16, 5))
    assert (found["offset_ci_low"] < found["offset_accuracy"]).all()
    assert (found["offset_accuracy"] < found["offset_ci_high"]).all()
    # twenty times the arcs: a narrower interval
    widths = found["head_ci_high"] - found["head_ci_low"]
    assert widths.iloc[1] < widths.iloc[0] / 3
    metrics = relation_metrics(found)
    assert metrics["all_relations_head_accuracy_ci_low"] == found["head_ci_low"].iloc[1]
    assert metrics["all_relations_best_head"] == "L3-H4"
