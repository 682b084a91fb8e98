"""The stage benchmark sums each stage's timings over tasks and seeds and scales them by the
matmul rate it is given; its ratio is this run over a saved table."""

from __future__ import annotations

import pandas as pd
import pytest

from benchmarks.bench_stages import (
    against,
    between_stages,
    cost_table,
    stage_runs,
    stage_seconds,
)
from pipeline.core.io import write_json


def test_timings_are_summed_per_stage_over_tasks_and_seeds(tmp_path):
    write_json(tmp_path / "prepare.json", {"stage": "prepare", "task": None, "seconds": 2.0})
    for task, seconds in [("mrpc", 10.0), ("rte", 5.5)]:
        record = {"stage": "finetune", "task": task, "seconds": seconds, "seed": 42}
        write_json(tmp_path / "finetune" / task / "seed42.json", record)
    assert stage_seconds(tmp_path) == {"prepare": 2.0, "finetune": 15.5}
    assert stage_runs(tmp_path) == 3


def test_the_time_outside_the_stages_is_the_wall_less_their_timers_per_run():
    line = between_stages(40.0, {"prepare": 2.0, "finetune": 15.5}, runs=3)
    assert line.startswith("dvc repro: 40.0 s wall, 22.5 s (56%) outside the stages' timers")
    assert "7.5 s per stage run (3 runs)" in line


def test_cost_is_seconds_times_the_rate_and_the_ratio_is_now_over_before():
    table = cost_table({"prepare": 2.0, "finetune": 6.0}, gflops=500.0)
    assert table["stage"].tolist() == ["finetune", "prepare"]  # slowest first
    assert table["tflop_at_peak"].tolist() == pytest.approx([3.0, 1.0])
    assert table["share"].tolist() == pytest.approx([0.75, 0.25])
    before = pd.DataFrame({"stage": ["finetune", "prepare"], "tflop_at_peak": [6.0, 1.0]})
    assert against(table, before)["ratio"].tolist() == pytest.approx([0.5, 1.0])
