"""The shared core: a killed writer's temporaries go away with the next write; stage timings
stay out of the metrics files; numbers are written at the stated precision."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pipeline.analyses.ablate.settings import AblateConfig
from pipeline.core.config import CONF_DIR
from pipeline.core.io import (
    DECIMALS,
    SIGNIFICANT_DIGITS,
    at_precision,
    atomic_path,
    write_json,
    write_table,
)
from pipeline.core.schema import DisableMode, TaskConfig, load_task, typed
from pipeline.core.stage import StageRun, _timed
from tests.support.builders import composed
from tests.support.paths import REPO, shared_data_folder
from tests.support.writers import half_written


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    target = tmp_path / "sst2.parquet"
    process = half_written(target)
    os.kill(process.pid, signal.SIGKILL)  # kill -9: no cleanup runs
    process.wait()
    leftovers = list(tmp_path.glob(".sst2.parquet.*.tmp"))
    assert leftovers and not target.exists()

    (tmp_path / ".other.json.abc.tmp").write_text("{}")  # another file's temporary stays
    write_json(target, {"done": True})
    assert json.loads(target.read_text()) == {"done": True}
    assert not list(tmp_path.glob(".sst2.parquet.*.tmp"))
    assert (tmp_path / ".other.json.abc.tmp").exists()


def test_a_stage_writes_its_time_to_timings_not_metrics(tmp_path: Path) -> None:
    cfg = composed()
    cfg.paths.outputs = str(tmp_path / "outputs")
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    stage = tmp_path / "stages" / "tiny_stage.py"
    stage.parent.mkdir()
    (stage.parent / "__init__.py").write_text("")
    stage.write_text(
        textwrap.dedent(
            """
            import time

            from pipeline.core.io import write_json
            from pipeline.core.stage import stage_main

            def run(stage):
                time.sleep(0.5)
                write_json(stage.out("metrics", "tiny.json"), {"value": 1})

            if __name__ == "__main__":
                stage_main(run)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "stages.tiny_stage", "--dvc", "rte"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    elapsed = time.perf_counter() - started
    assert json.loads((tmp_path / "outputs/metrics/tiny.json").read_text()) == {"value": 1}
    timing = json.loads((tmp_path / "outputs/timings/tiny_stage/rte.json").read_text())
    # the stage's own run: its half-second sleep, within the whole process's time
    assert timing["stage"] == "tiny_stage" and 0.5 <= timing["seconds"] <= elapsed


def test_a_group_reaches_its_package_as_its_schema_dataclass(tmp_path) -> None:
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["task=rte"])
    stage = StageRun(cfg, out_root=tmp_path, under_dvc=False)
    settings = stage.settings("ablate")
    assert isinstance(settings, AblateConfig) and settings.mode is DisableMode.uniform
    assert isinstance(stage.task, TaskConfig) and stage.task.num_labels == 2
    untyped = OmegaConf.create({"ablate": OmegaConf.to_container(cfg.ablate)})
    assert StageRun(untyped, out_root=tmp_path, under_dvc=True).settings("ablate") == settings
    assert typed(TaskConfig, OmegaConf.load(CONF_DIR / "task" / "rte.yaml")) == load_task("rte")


def test_floats_differing_in_their_last_bits_are_written_alike(tmp_path: Path) -> None:
    shares = [0.1] * 7 + [0.3] * 3  # one mean summed in two orders: 0.16 and 0.16000000000000003
    forward, backward = sum(shares) / 10, sum(reversed(shares)) / 10
    assert forward != backward
    write_json(tmp_path / "a.json", {"share": forward, "nested": {"x": [forward]}})
    write_json(tmp_path / "b.json", {"share": backward, "nested": {"x": [backward]}})
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    frames = [pd.DataFrame({"share": [value]}) for value in (forward, backward)]
    for name, frame in zip(("a.csv", "b.csv"), frames, strict=True):
        write_table(tmp_path / name, frame)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text() == "share\n0.16\n"


def test_metrics_keep_their_stated_significant_digits_and_every_non_float(tmp_path) -> None:
    assert (SIGNIFICANT_DIGITS, DECIMALS) == (6, 12)  # as docs/comparing-runs.md states
    metrics = {
        "accuracy": 30000 / 40430,  # one example apart on QQP's dev set: still apart
        "next": 30001 / 40430,
        "p_value": 1 / 10000,
        "delta": -0.0123456789,
        "rows": 408,
        "significant": True,
        "best_head": "L2-H3",
        "missing": None,
        "chance": 1.6921801301782995e-16,  # the correlation of a constant prediction: 0
        "chance_ci_low": -3.1746257487437485e-16,
    }
    write_json(tmp_path / "m.json", metrics)
    text = (tmp_path / "m.json").read_text()
    written = json.loads(text)
    assert written == {
        **metrics, "accuracy": 0.742023, "next": 0.742048, "delta": -0.0123457, "chance": 0.0,
        "chance_ci_low": 0.0,
    }  # fmt: skip
    assert '"chance_ci_low": 0.0,' in text  # not -0.0
    assert type(written["rows"]) is int and written["significant"] is True


def test_the_committed_intervals_span_many_steps_of_the_last_digit_written() -> None:
    """The precision hides nothing an estimate resolves: every 95% interval of the committed
    metrics that is not float64 noise around zero spans at least ten steps of the last digit
    written of its estimate."""
    checked, coarse = 0, []
    for path in sorted((REPO / "outputs" / "metrics").rglob("*.json")):
        metrics = json.loads(path.read_text())
        for key, low in metrics.items():
            estimate = key.removesuffix("_ci_low")
            high, value = metrics.get(f"{estimate}_ci_high"), metrics.get(estimate)
            if key == estimate or not all(isinstance(v, float) for v in (low, high, value)):
                continue
            if at_precision(high - low) == 0.0:  # an exact or noise-only interval
                continue
            last_digit = 10.0 ** (math.floor(math.log10(abs(value))) - SIGNIFICANT_DIGITS + 1)
            checked += 1
            if high - low < 10 * last_digit:
                coarse.append((path.name, estimate, low, high))
    assert checked > 100 and coarse == []


# pytest's outcomes: a data test fails in CI, and is skipped elsewhere
OUTCOMES = [("true", pytest.fail.Exception), ("", pytest.skip.Exception)]


@pytest.mark.parametrize(("ci", "outcome"), OUTCOMES)
def test_a_missing_data_folder_fails_a_data_test_in_ci(tmp_path, monkeypatch, ci, outcome) -> None:
    """Elsewhere such a test is skipped, with the reason in the summary (`pytest -rs`)."""
    monkeypatch.setenv("DARK_SECRETS_DATA", str(tmp_path / "absent"))
    monkeypatch.setenv("CI", ci)
    with pytest.raises(BaseException) as raised:  # both outcomes derive from BaseException
        shared_data_folder()
    assert type(raised.value) is outcome and "offline data not found" in str(raised.value)


def test_atomic_write_leaves_no_partial_output(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"a": 1})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text().strip().startswith("{") and list(tmp_path.iterdir()) == [target]


def test_an_unseeded_runs_bookkeeping_reads_no_seed(tmp_path: Path) -> None:
    """The time and keyed folders of a run without `--seed` are written without reading
    `seed`, which an unseeded stage does not declare among its params (the slow trace test,
    tests/dag/test_stage_trace.py, checks the same for every stage)."""
    cfg = OmegaConf.to_container(composed())
    del cfg["seed"]
    stage = StageRun(OmegaConf.create(cfg), out_root=tmp_path, under_dvc=True)
    _timed(lambda run: None, stage, "unseeded", None)
    assert json.loads((tmp_path / "timings" / "unseeded.json").read_text())["stage"] == "unseeded"
