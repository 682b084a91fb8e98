"""The GPU check's records and targets: the targets read the right figures and compare them
with the issue's thresholds; the whole script runs on the CPU in its smoke mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.gpu_records import RUNS, targets, write_records
from benchmarks.records import load

REPO = Path(__file__).resolve().parents[2]


def comparison(workload: str, loop: float, trainer: float) -> dict:
    return {
        "model": "bert-base-shaped",
        "workload": workload,
        "loop": {"examples_per_s": loop},
        "trainer": {"examples_per_s": trainer},
        "loop_over_trainer": loop / trainer,
    }


def runs(paper_hours: float) -> dict[str, dict]:
    return {
        "trainer_fast": {
            "comparisons": [comparison("fixed", 1200, 1000), comparison("rte", 900, 1000)]
        },
        "trainer_baseline": {
            "comparisons": [comparison("fixed", 500, 600), comparison("rte", 400, 450)]
        },
        "paper_cost": {"projection": {"total": {"hours": paper_hours}}},
    }


def test_each_target_reads_its_figure_and_threshold():
    checks = {what: (figure, met) for what, figure, met in targets(runs(1.2))}
    assert checks["bert-base-shaped, fixed: loop / Trainer"] == (1.2, True)
    assert checks["bert-base-shaped, rte: loop / Trainer"] == (0.9, False)
    assert checks["bert-base-shaped, fixed: loop / baseline loop"] == (2.4, True)
    assert checks["bert-base-shaped, rte: loop / baseline loop"] == (2.25, True)
    assert checks["paper profile projected (h)"] == (1.2, True)
    assert not dict((w, m) for w, _, m in targets(runs(1.6)))["paper profile projected (h)"]


def test_the_records_carry_the_machine(tmp_path):
    for run, record in runs(1.0).items():
        (tmp_path / f"{run}.json").write_text(json.dumps(record))
    write_records(tmp_path)
    for run in RUNS:
        record = load(run, tmp_path / "records")
        assert {"torch", "transformers", "load_average", "date"} <= set(record["machine"])


@pytest.mark.slow
def test_the_gpu_check_runs_whole_on_the_cpu_in_its_smoke_mode(tmp_path, shared_data):
    env = {
        **os.environ,
        "OUT": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    result = subprocess.run(
        ["bash", "benchmarks/gpu_check.sh", "smoke"], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    for run in RUNS:
        assert "machine" in load(run, tmp_path / "records")
    assert load("trainer_fast", tmp_path)["trainer_arguments"]["optim"] == "adamw_torch_fused"
    assert "paper profile projected (h)" in result.stdout
