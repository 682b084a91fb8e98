"""The kept `bench_trainer` records (benchmarks/records/): the benchmarks page shows each
one's table as the benchmark prints it, and each says both sides trained on the same batches."""

from __future__ import annotations

import pytest

from benchmarks.records import TRAINER_RUNS, load, trainer_table
from tests.support.paths import REPO


@pytest.mark.parametrize("run", TRAINER_RUNS)
def test_the_benchmarks_page_shows_the_trainer_record(run):
    assert trainer_table(run) in (REPO / "docs/benchmarks.md").read_text()


@pytest.mark.parametrize("run", TRAINER_RUNS)
def test_each_trainer_record_compared_identical_batches(run):
    for comparison in load(run)["comparisons"]:
        assert all(comparison["same_batches"]), comparison["workload"]
