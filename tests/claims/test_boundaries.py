"""Verdicts at the edges of their statistics: no decision on a zero-width interval, corrected
shares whose intervals do not collapse at 0, a share below the classifier's resolution left
inconclusive, and seeds pooled without trusting a collapsed interval."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.claims.claim import Claim, Source
from pipeline.claims.evaluate import evaluate_claim, judge
from pipeline.claims.rules import ZERO_WIDTH, Beyond, Estimate, settle
from pipeline.claims.seeds import COLLAPSED, across_seeds
from pipeline.claims.shares import corrected_shares, exact_lower
from pipeline.claims.thresholds import Threshold

TYPES = ("block", "other")


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
    below = Estimate(0.0, -0.03, 0.002, unresolved="below the classifier's resolution: block")
    row, _ = evaluate_claim(_claim(), {42: below}, {42: ""}, float("nan"))
    assert row["verdict"] == "inconclusive"
    assert row["reason"].startswith("below the classifier's resolution: block")
    assert row["verdict_half_threshold"] == row["verdict_double_threshold"] == "inconclusive"


def _block_case(observed_block: float, seed: int = 0):
    """Registry version 3's MRPC case: 20 block maps labelled by eye, 5 recalled; 696 other maps,
    11 of them called block (1.58%); the classifier's block share `observed_block` with a
    +-0.0017 interval over examples."""
    actual = ["block"] * 20 + ["other"] * 696
    predicted = ["block"] * 5 + ["other"] * 15 + ["block"] * 11 + ["other"] * 685
    observed = np.array([observed_block, 1 - observed_block])
    examples = [str(i) for i in range(len(actual))]  # a map per example
    return corrected_shares(
        observed, observed - 0.0017, observed + 0.0017, actual, predicted, examples, TYPES,
        0.005, resamples=400, seed=seed,
    )  # fmt: skip


def test_a_share_below_the_false_positive_rate_does_not_collapse_and_is_below_resolution():
    found = _block_case(0.0033)
    # the estimate is solved as its draws are, below 0 here, and lies inside their interval
    assert found.ci_low[0] <= found.corrected[0] <= found.ci_high[0] and found.corrected[0] < 0
    assert found.ci_high[0] - found.ci_low[0] > 0.01  # the labelled maps' error is kept
    assert found.below_resolution() == ["block"]
    assert found.false_positive_low[0] == pytest.approx(exact_lower(11, 696))


def test_a_share_above_the_false_positive_rate_is_resolved():
    found = _block_case(0.05)
    assert found.below_resolution() == []
    assert found.ci_low[0] < found.corrected[0] < found.ci_high[0]


def test_the_exact_lower_bound_matches_clopper_pearson():
    # 11 of 696: the exact 95% interval is 0.79% to 2.81% (the figures)
    assert exact_lower(11, 696) == pytest.approx(0.0079, abs=5e-5)
    assert exact_lower(0, 10) == 0.0 and np.isnan(exact_lower(0, 0))


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


def test_a_seed_below_resolution_keeps_the_pooled_interval_unresolved():
    below = Estimate(0.0, -0.01, 0.004, unresolved="below the classifier's resolution: block")
    pooled = across_seeds([below, Estimate(0.02, 0.01, 0.03)])
    assert pooled.unresolved.startswith("below the classifier's resolution")
