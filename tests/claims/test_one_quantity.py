"""One quantity for estimate and interval: pooling seeds refuses a seed whose estimate lies
outside its own interval and keeps every pooled bound on its side of the estimate."""

from __future__ import annotations

import pytest

from pipeline.claims.rules import Estimate
from pipeline.claims.seeds import across_seeds
from pipeline.core.errors import PipelineError


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
