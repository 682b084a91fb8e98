"""The seed interval's coverage: the committed table (`python -m pipeline.claims.coverage`)
covers the whole grid and keeps the bound docs/statistics.md states, and a short run of the
simulation keeps the interval's level where the two-level bootstrap loses it."""

from __future__ import annotations

import math

import pytest

from pipeline.claims.coverage import (
    HEADER,
    LOWEST_COVERAGE,
    REPLICATES,
    SEED_COUNTS,
    SPREADS,
    TABLE,
    UNITS,
    coverage_table,
    expected_maximum,
    simulate,
)
from tests.support.paths import REPO


def committed_rows() -> list[list[str]]:
    lines = (REPO / TABLE).read_text().splitlines()
    assert lines[0] == HEADER, f"{TABLE} is not what `python -m pipeline.claims.coverage` writes"
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_the_committed_table_covers_the_grid_the_docs_describe():
    cells = {(row[0], int(row[1]), float(row[2])) for row in committed_rows()}
    grid = {(name, k, spread) for name in ("mean", f"max over {UNITS} units")
            for k in SEED_COUNTS for spread in SPREADS}  # fmt: skip
    assert cells == grid
    assert max(SPREADS) >= 8 and REPLICATES >= 2000
    docs = (REPO / "docs" / "statistics.md").read_text()
    assert f"at least {LOWEST_COVERAGE:g}" in docs and "2,000 replicates" in docs


def test_every_committed_cell_keeps_the_documented_bound():
    for name, k, spread, ours, _ in committed_rows():
        assert float(ours) >= LOWEST_COVERAGE, f"{name}, {k} seeds, spread {spread}: {ours}"


def test_the_committed_bootstrap_column_shows_what_the_interval_was_chosen_over():
    """The two-level bootstrap, simulated for the mean only, falls below 90% once seeds
    differ by 8 standard errors."""
    widest = [row for row in committed_rows() if row[0] == "mean" and float(row[2]) == 8]
    assert widest and all(float(row[4]) < 0.9 for row in widest)


def test_the_expected_maximum_of_normals():
    assert expected_maximum(1) == pytest.approx(0.0, abs=1e-9)
    assert expected_maximum(2) == pytest.approx(1 / math.sqrt(math.pi))  # E max of 2: 1/√π


@pytest.mark.parametrize("statistic", ["mean", "max"])
def test_a_short_run_keeps_the_level_where_seeds_differ_by_eight_standard_errors(statistic):
    found = simulate(3, 8.0, statistic, replicates=150)
    assert found.across_seeds >= 0.93
    if statistic == "mean":
        assert found.two_level_bootstrap < 0.9


@pytest.mark.slow
def test_the_committed_table_is_what_the_simulation_gives():
    assert (REPO / TABLE).read_text() == coverage_table() + "\n"
