"""The claims' statistics: the interval over seeds and examples (a hand computation and its
coverage by simulation) and the best unit's simultaneous interval (coverage by simulation,
against the best unit's own interval, which does not hold)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, t

from pipeline.claims.evaluate import rows_needed
from pipeline.claims.figures import scaled
from pipeline.claims.rules import Estimate
from pipeline.claims.seeds import across_seeds
from pipeline.claims.selection import best_removal, best_unit, mean_removal
from pipeline.claims.thresholds import Z_POWER
from pipeline.claims.unchanged import changed_share_bound


def test_one_seed_keeps_its_own_interval():
    only = Estimate(0.2, 0.1, 0.35)
    assert across_seeds([only]) is only


def test_seeds_and_examples_add_in_quadrature():
    per_seed = [Estimate(0.1, 0.05, 0.2), Estimate(0.3, 0.2, 0.35), Estimate(0.2, 0.1, 0.3)]
    combined = across_seeds(per_seed)
    between = t.ppf(0.975, 2) * np.std([0.1, 0.3, 0.2], ddof=1) / np.sqrt(3)
    below, above = np.mean([0.05, 0.1, 0.1]), np.mean([0.1, 0.05, 0.1])
    assert combined.statistic == pytest.approx(0.2)
    assert combined.ci_low == pytest.approx(0.2 - np.hypot(between, below))
    assert combined.ci_high == pytest.approx(0.2 + np.hypot(between, above))


def test_the_seed_detectable_effect_is_the_half_width_plus_z_power_standard_errors():
    """Not the whole width read at a per-seed critical value: with 3 seeds the seeds' part
    of the half-width is 4.30 of their standard errors, not 1.96."""
    per_seed = [Estimate(0.1, 0.05, 0.15), Estimate(0.3, 0.25, 0.35), Estimate(0.2, 0.15, 0.25)]
    combined = across_seeds(per_seed)
    spread = np.std([0.1, 0.3, 0.2], ddof=1) / np.sqrt(3)
    error = np.hypot(spread, 0.05 / 1.959964)
    half = (combined.ci_high - combined.ci_low) / 2
    assert combined.detectable == pytest.approx(half + Z_POWER * error, rel=1e-6)
    assert combined.detectable < half / 1.959964 * (1.959964 + Z_POWER)  # the old reading
    between = t.ppf(0.975, 2) * spread
    assert combined.evidence["between_seeds"] == pytest.approx(between)
    assert combined.evidence["within_seeds"] == pytest.approx(0.05)


def test_an_interval_of_zero_width_becomes_the_bound_on_rows_that_could_change():
    assert changed_share_bound(96) == pytest.approx(1 - 0.025 ** (1 / 96))  # 0.0377
    table = pd.DataFrame(
        {"delta": [0.0, 0.0, 0.02], "ci_low": [0.0, 0.0, -0.01], "ci_high": [0.0, 0.0, 0.05],
         "q_value": [1.0, 1.0, 0.5]}
    )  # fmt: skip
    best = best_removal(table, 96)
    assert best.note.startswith("2 of 3 heads changed no prediction on the 96 rows")
    assert best.ci_low < 0 < best.ci_high  # [0, 0] no longer decides anything
    mean = mean_removal(table, 96)
    bound = changed_share_bound(96)
    whole = pd.DataFrame({"delta": [0, 0], "ci_low": [0, 0], "ci_high": [0, 0], "q_value": [1, 1]})
    assert mean_removal(whole, 96).ci_high == pytest.approx(bound)  # integer columns too
    assert mean.statistic == pytest.approx(0.02 / 3)
    assert mean.ci_low == pytest.approx(mean.statistic - (2 * bound + 0.03) / 3)
    assert mean.ci_high == pytest.approx(mean.statistic + (2 * bound + 0.03) / 3)


def test_the_mean_removal_interval_covers_by_simulation():
    """Heads whose changes share the rows' noise: the mean of the half-widths covers the mean
    change at least 95% of the time."""
    rng = np.random.default_rng(3)
    hits, replicates, units, rows = 0, 400, 20, 200
    for _ in range(replicates):
        shared = rng.normal(0, 1, rows)  # [N]
        changes = 0.5 * shared + rng.normal(0, 1, (units, rows))  # [m, N], true mean 0
        delta = changes.mean(axis=1)
        half = 1.959964 * changes.std(axis=1, ddof=1) / np.sqrt(rows)
        table = pd.DataFrame({"delta": delta, "ci_low": delta - half, "ci_high": delta + half})
        found = mean_removal(table, rows)
        hits += found.ci_low <= 0 <= found.ci_high
    assert hits / replicates >= 0.95


def _best_unit_coverage(units: int, best_effect: float, replicates: int = 2000) -> tuple:
    """Coverage of the largest true effect by the simultaneous interval and by the chosen
    unit's own 95% interval, units with standard error 1 and true effects 0 but one."""
    rng = np.random.default_rng(5)
    truth = np.zeros(units)
    truth[0] = best_effect
    simultaneous = own = 0
    for _ in range(replicates):
        delta = truth + rng.normal(0, 1, units)
        low, high = delta - 1.959964, delta + 1.959964
        chosen = best_unit(delta, low, high)
        simultaneous += chosen.ci_low <= truth.max() <= chosen.ci_high
        best = int(np.argmax(delta))
        own += low[best] <= truth.max() <= high[best]
    return simultaneous / replicates, own / replicates


@pytest.mark.parametrize("best_effect", [0.0, 2.0, 5.0])
def test_the_best_units_interval_accounts_for_choosing_it(best_effect):
    simultaneous, own = _best_unit_coverage(72, best_effect)
    assert simultaneous >= 0.95
    if best_effect == 0.0:  # 72 null heads: the best one's own interval misses 0 mostly
        assert own < 0.5


def test_the_simultaneous_interval_uses_the_bonferroni_z():
    chosen = best_unit(np.array([0.0, 0.1]), np.array([-0.196, -0.096]), np.array([0.196, 0.296]))
    z = norm.ppf(1 - 0.05 / 4)
    assert chosen.critical == pytest.approx(z)
    assert chosen.ci_low == pytest.approx(0.1 - z * 0.1, rel=1e-4)
    assert chosen.ci_high == pytest.approx(0.1 + z * 0.1, rel=1e-4)


def test_rows_needed_grows_with_the_rows_and_stops_at_the_seeds_spread():
    one_seed = Estimate(0.0, -0.196, 0.196, evidence={"rows": 100})  # standard error 0.1
    detectable = one_seed.detectable
    assert rows_needed(one_seed, detectable / 2) == pytest.approx(400, abs=1)  # 4x the rows
    seeds = Estimate(
        0.0, -0.3, 0.3, critical=2.5,
        evidence={"rows": 100, "between_seeds": 0.25, "within_seeds": 0.17},
    )  # fmt: skip
    target = 0.2 * 2.5 / (2.5 + Z_POWER)  # the half-width that detects 0.2: below 0.25
    assert target < 0.25 and math.isinf(rows_needed(seeds, 0.2))
    assert rows_needed(seeds, 0.5) == math.ceil(
        100 * 0.17**2 / ((0.5 * 2.5 / (2.5 + Z_POWER)) ** 2 - 0.25**2)
    )


def test_the_forest_plot_turns_every_claim_to_its_claimed_side():
    table = pd.DataFrame(
        {"claim": ["kovaleva.a", "michel.b", "extension.c"], "verdict": ["supported"] * 3,
         "estimate": [0.1, -0.005, 0.75], "ci_low": [0.05, -0.02, 0.6],
         "ci_high": [0.15, 0.01, 0.9], "threshold": [0.0, -0.01, 0.5],
         "side": ["above", "above", "below"]}
    )  # fmt: skip
    points = scaled(table).set_index("claim")
    assert tuple(points.loc["kovaleva.a", ["x", "x_low", "x_high"]]) == pytest.approx(
        (0.1, 0.05, 0.15)
    )  # threshold 0: the statistic's own units
    assert tuple(points.loc["michel.b", ["x", "x_low", "x_high"]]) == pytest.approx(
        (0.5, -1.0, 2.0)
    )  # (value + 0.01) / 0.01
    assert tuple(points.loc["extension.c", ["x", "x_low", "x_high"]]) == pytest.approx(
        (-0.5, -0.8, -0.2)
    )  # below 0.5 claimed: turned, so the claimed side is right
    assert list(points["group"]) == [
        "Kovaleva et al. 2019", "Michel et al. 2019", "Extensions (this project's)"
    ]  # fmt: skip
