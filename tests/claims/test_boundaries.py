"""Verdicts at the edges of their statistics: no decision on a zero-width interval, an
unresolved statistic left inconclusive, and seeds pooled without trusting a collapsed
interval."""

from __future__ import annotations

import pytest

from pipeline.claims.claim import Claim, Source
from pipeline.claims.evaluate import evaluate_claim, judge
from pipeline.claims.rules import ZERO_WIDTH, Beyond, Estimate, settle
from pipeline.claims.seeds import COLLAPSED, across_seeds
from pipeline.claims.thresholds import Threshold


def _claim() -> Claim:
    return Claim(
        name="test.boundary",
        source=Source("paper", "Sec. 1", "a share is above 0.01"),
        finding="a share is above 0.01",
        statistic="a share",
        rule=Beyond(Threshold(0.01, "test", from_paper=False)),
        measure=lambda out, seed: Estimate(0.0, 0.0, 0.0),
        finetuned=("mrpc",),
        gated=False,
    )


def test_a_zero_width_interval_decides_nothing():
    collapsed = Estimate(0.0, 0.0, 0.0)
    assert Beyond(Threshold(0.01, "t", False))(collapsed) == "contradicted"
    assert settle("contradicted", collapsed) == ("inconclusive", ZERO_WIDTH)
    judged = judge(_claim(), collapsed)
    assert judged.verdict == "inconclusive" and judged.reason.startswith(ZERO_WIDTH)


def test_an_interval_with_width_still_decides():
    assert judge(_claim(), Estimate(0.002, 0.0, 0.005)).verdict == "contradicted"
    assert judge(_claim(), Estimate(0.05, 0.02, 0.08)).verdict == "supported"


def test_an_unresolved_statistic_is_inconclusive_at_every_threshold():
    below = Estimate(0.0, -0.03, 0.002, unresolved="the statistic cannot be placed: x")
    row, _ = evaluate_claim(_claim(), {42: below}, {42: ""}, float("nan"))
    assert row["verdict"] == "inconclusive"
    assert row["reason"].startswith("the statistic cannot be placed: x")
    assert row["verdict_half_threshold"] == row["verdict_double_threshold"] == "inconclusive"


def test_a_collapsed_seed_does_not_shrink_the_pooled_interval():
    """Standard MRPC's three seeds: [0, 0.0234], [0, 0], [0, 0]. Averaging the collapsed
    seeds in gave [0, 0.0078]; left out, the pooled interval keeps the real seed's width."""
    pooled = across_seeds(
        [Estimate(0.0, 0.0, 0.0234), Estimate(0.0, 0.0, 0.0), Estimate(0.0, 0.0, 0.0)]
    )
    assert pooled.ci_high == pytest.approx(0.0234)
    assert pooled.unresolved == ""


def test_seeds_all_collapsed_pool_to_an_unresolved_interval():
    pooled = across_seeds([Estimate(0.0, 0.0, 0.0)] * 3)
    assert pooled.unresolved == COLLAPSED
    assert judge(_claim(), pooled).verdict == "inconclusive"


def test_an_unresolved_seed_keeps_the_pooled_interval_unresolved():
    below = Estimate(0.0, -0.01, 0.004, unresolved="the statistic cannot be placed: x")
    pooled = across_seeds([below, Estimate(0.02, 0.01, 0.03)])
    assert pooled.unresolved.startswith("the statistic cannot be placed")
