"""The kept benchmark records (benchmarks/records/): the page shows their table, and each
record's projection follows from its measured costs under today's profiles."""

from __future__ import annotations

import pytest

from benchmarks.bench_cost import Shape, profile_params, projection
from benchmarks.records import GPU_RUNS, gpu_cost_table, load
from tests.support.paths import REPO


def test_the_benchmarks_page_shows_the_records_gpu_table():
    assert gpu_cost_table() in (REPO / "docs/benchmarks.md").read_text()


@pytest.mark.parametrize("run", GPU_RUNS)
def test_each_gpu_record_projects_from_its_costs_under_todays_profile(run):
    record = load(f"h200_{run}")
    params = profile_params(record["args"]["profile"])
    table = projection(record["cost"], params, Shape.of_model(params["model"]))
    for row, values in record["projection"].items():
        for column in ("hours", "disk_gib"):
            assert table.loc[row, column] == pytest.approx(values[column], abs=6e-4), (row, column)
