"""Estimates of independent strata pooled into one (pipeline/claims/strata.py)."""

from __future__ import annotations

import math

import pytest

from pipeline.claims.rules import Estimate
from pipeline.claims.strata import stratified


def test_strata_are_weighted_by_their_examples_and_their_variances_add():
    # standard errors 0.1 and 0.2 (half-widths 1.96 times them)
    first = Estimate(1.0, 1.0 - 0.196, 1.0 + 0.196, critical=1.96)
    second = Estimate(4.0, 4.0 - 0.392, 4.0 + 0.392, critical=1.96)
    found = stratified([(first, 30), (second, 10)])
    assert found.statistic == pytest.approx(0.75 * 1.0 + 0.25 * 4.0)
    se = math.sqrt((0.75 * 0.1) ** 2 + (0.25 * 0.2) ** 2)
    assert (found.ci_high - found.statistic) / se == pytest.approx(1.96, abs=1e-3)
    assert found.evidence["rows"] == 40
    assert found.inside


def test_one_stratum_keeps_its_own_interval():
    only = Estimate(0.3, 0.2, 0.4)
    found = stratified([(only, 64)])
    assert (found.statistic, found.ci_low, found.ci_high) == pytest.approx(
        (0.3, 0.2, 0.4), abs=1e-3
    )


def test_no_examples_is_refused():
    with pytest.raises(ValueError, match="no stratum"):
        stratified([])
