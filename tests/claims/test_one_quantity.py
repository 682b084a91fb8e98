"""One quantity for estimate and interval: pooling seeds refuses a seed whose estimate lies
outside its own interval and keeps every pooled bound on its side of the estimate; an
unresolved share decides a claim only when the verdict is the same at both ends of what the
share can be (its bracket)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.claims.claim import Claim, Source
from pipeline.claims.evaluate import evaluate_claim, judge
from pipeline.claims.rules import Beyond, Estimate, settle
from pipeline.claims.seeds import across_seeds
from pipeline.claims.share_notes import bracket_ends, share_bounds
from pipeline.claims.shares import corrected_shares
from pipeline.claims.thresholds import Threshold
from pipeline.core.errors import PipelineError

UNRESOLVED = "below the classifier's resolution: block"


def _claim(threshold: float = 1.0) -> Claim:
    return Claim(
        name="test.one_quantity",
        source=Source("paper", "Sec. 1", "a share recurs"),
        finding="a share recurs",
        statistic="a share in heads' worth",
        rule=Beyond(Threshold(threshold, "test", from_paper=False)),
        measure=lambda out, seed: Estimate(0.0, 0.0, 0.0),
        finetuned=("mrpc",),
        gated=False,
    )


def test_a_seed_outside_its_own_interval_is_refused():
    """Version 5's default MRPC row: a clipped 0 beside unclipped draws [-22.18, -0.24]."""
    with pytest.raises(PipelineError, match="outside its own interval"):
        across_seeds([Estimate(0.0, -22.18, -0.24), Estimate(-3.0, -20.0, -0.3)])
    with pytest.raises(PipelineError, match="outside its own interval"):
        across_seeds([Estimate(0.0, -22.18, -0.24)])  # one seed too


def test_pooled_bounds_stay_on_their_side_of_the_estimate():
    """Seeds -0.4, -0.5, -0.6, each +-0.1: the seeds' part is t(2) 0.1 / sqrt(3) = 0.2484
    (t = 4.3027), the examples' part 0.1, so the upper bound is -0.5 + hypot(0.2484, 0.1) =
    -0.2322: below 0, where `hypot` of signed distances once put it at +0.2322."""
    pooled = across_seeds([Estimate(e, e - 0.1, e + 0.1) for e in (-0.4, -0.5, -0.6)])
    assert pooled.statistic == pytest.approx(-0.5)
    assert pooled.ci_high == pytest.approx(-0.23221, abs=1e-5)
    assert pooled.ci_low == pytest.approx(-0.76779, abs=1e-5)


def test_an_unresolved_share_stands_where_both_ends_agree():
    """Both ends below one head's worth: the claim is contradicted whatever the share is."""
    ends = (Estimate(0.0, 0.0, 0.0), Estimate(0.4, 0.4, 0.4))
    measured = Estimate(0.1, -2.0, 0.5, unresolved=UNRESOLVED, bracket=ends)
    assert judge(_claim(), measured).verdict == "contradicted"
    assert settle("contradicted", measured) == ("inconclusive", UNRESOLVED)  # no rule given


def test_an_unresolved_share_is_inconclusive_where_the_ends_differ():
    ends = (Estimate(0.0, 0.0, 0.0), Estimate(1.4, 1.4, 1.4))  # at its bound: supported
    measured = Estimate(0.1, -2.0, 0.5, unresolved=UNRESOLVED, bracket=ends)
    judged = judge(_claim(), measured)
    assert (judged.verdict, judged.reason) == ("inconclusive", UNRESOLVED)
    no_bracket = Estimate(0.1, -2.0, 0.5, unresolved=UNRESOLVED)
    assert judge(_claim(), no_bracket).verdict == "inconclusive"


def test_seeds_pool_their_brackets_end_by_end():
    """Two seeds below resolution (between 0 and 0.4) and one resolved at 0.1 [0, 0.2]: the
    pooled ends are 0.033 and (0.4 + 0.4 + 0.1) / 3 = 0.3, both below 1 with their spread."""
    ends = (Estimate(0.0, 0.0, 0.0), Estimate(0.4, 0.3, 0.5))
    below = Estimate(0.1, -2.0, 0.5, unresolved=UNRESOLVED, bracket=ends)
    seeds = {42: below, 43: below, 44: Estimate(0.1, 0.0, 0.2)}
    row, _ = evaluate_claim(_claim(), seeds, dict.fromkeys(seeds, ""), math.nan)
    assert row["verdict"] == "contradicted"
    pooled = across_seeds(list(seeds.values()))
    assert pooled.bracket[1].statistic == pytest.approx(0.3)
    assert pooled.bracket[0].statistic == pytest.approx(0.1 / 3)
    assert across_seeds([below, Estimate(0.1, 0.0, 0.2, unresolved="x")]).bracket == ()


def test_the_bracket_sets_a_share_below_resolution_to_0_and_to_its_bound():
    """20 block maps labelled, 5 recalled (exact 95% lower bound of recall 0.08657); 696
    other maps, 11 called block; block observed at 0.0033 +- 0.0017: its share is at most
    0.0050 / 0.08657 = 0.05776."""
    actual = ["block"] * 20 + ["other"] * 696
    predicted = ["block"] * 5 + ["other"] * 15 + ["block"] * 11 + ["other"] * 685
    observed = np.array([0.0033, 0.9967])
    found = corrected_shares(
        observed, observed - 0.0017, observed + 0.0017, actual, predicted,
        [str(i) for i in range(716)], ("block", "other"), 0.005, resamples=200, seed=0,
    )  # fmt: skip
    assert found.below_resolution() == ["block"]
    assert share_bounds(found)[0] == pytest.approx(0.05776, abs=1e-5)
    at_zero, at_bound = bracket_ends(found)
    assert (at_zero[0][0], at_zero[1][0], at_zero[2][0]) == (0.0, 0.0, 0.0)
    assert at_bound[1][0] == at_bound[2][0] == pytest.approx(0.05776, abs=1e-5)
    np.testing.assert_array_equal(at_zero[1][1:], found.ci_low[1:])  # other types untouched
