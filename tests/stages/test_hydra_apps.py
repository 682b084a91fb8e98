"""Stages as Hydra apps: multirun through a launcher, early failure on bad values."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.support.paths import REPO


def _stage(args: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


# the names' messages are tested in-process (tests/core/test_config.py); here a sweep's path
@pytest.mark.slow  # a stage process that loads torch: about 8 s
def test_sweep_over_unknown_task_fails_before_any_job(tmp_path):
    sweep_dir = tmp_path / "sweep"
    result = _stage(["stages.finetune", "-m", "task=sst2,sst3", f"hydra.sweep.dir={sweep_dir}"])
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: unknown task 'sst3'; valid tasks: "
        "cola, mnli, mrpc, qnli, qqp, rte, sst2, stsb, wnli"
    ]
    assert not sweep_dir.exists()  # no job started


@pytest.mark.slow  # a stage process that loads torch: about 8 s
def test_unknown_model_in_a_sweep_lists_valid_models():
    result = _stage(["stages.finetune", "-m", "model=minilm_l6,bert_huge"])
    assert result.returncode == 2
    valid = (
        "albert_base_v2, bert_base_uncased, deberta_v3_base, distilbert_base_uncased, "
        "electra_base_discriminator, minilm_l6, modernbert_base, mpnet_base, roberta_base, "
        "tiny_albert, tiny_distilbert, tiny_mpnet, tiny_random"
    )
    assert f"unknown model 'bert_huge'; valid models: {valid}" in result.stderr


# each bound's message is tested in-process (tests/core/test_bounds.py); here the path of a
# refused Hydra job, once in the default run and for the other two bounds' kinds with -m slow
@pytest.mark.parametrize(
    ("override", "line"),
    [
        (
            "finetune.learning_rate=-1",
            "finetune.learning_rate=-1.0: must be more than 0; "
            "set finetune.learning_rate to a value more than 0",
        ),
        pytest.param(
            "finetune.epochs=0",
            "finetune.epochs=0: must be at least 1; set finetune.epochs=1 or more",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "finetune.batch_size=0",
            "finetune.batch_size=0: must be at least 1; set finetune.batch_size=1 or more",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_value_out_of_bounds_fails_in_one_line_leaving_no_job_folder(
    tmp_path, override: str, line: str
) -> None:
    job = tmp_path / "job"
    result = _stage(
        [
            "stages.finetune",
            "task=rte",
            "experiment=micro",
            override,
            f"hydra.run.dir={job}",
            f"paths.runs={tmp_path / 'runs'}",
        ]
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {line}"]
    assert list(tmp_path.iterdir()) == []  # neither the job's folder nor a keyed input


@pytest.mark.slow  # 15-50 s end to end: run with `pytest -m slow` (CI, time allowing)
def test_submitit_local_sweep_runs_one_job_per_task(micro_data, tmp_path):
    sweep_dir = tmp_path / "sweep"
    tracked = REPO / "outputs" / "metrics" / "finetune"
    before = {p: p.stat().st_mtime for p in tracked.rglob("*.json")} if tracked.exists() else {}
    result = _stage(
        [
            "stages.finetune",
            "-m",
            "hydra/launcher=submitit_local_small",
            "experiment=micro",
            "task=mrpc,rte",
            f"paths.data={micro_data}",
            "finetune.baselines.random_init=false",
            f"hydra.sweep.dir={sweep_dir}",
            f"paths.runs={tmp_path / 'runs'}",
        ]
    )
    assert result.returncode == 0, result.stderr[-2000:]
    keyed = tmp_path / "runs" / "micro" / "tiny_random"  # by profile, model and settings
    for job, task in enumerate(["mrpc", "rte"]):
        folder = sweep_dir / f"{job}_{task}_tiny_random_micro"  # job, task, model, profile
        metrics = json.loads((folder / "metrics/finetune" / task / "seed42.json").read_text())
        predictions = pd.read_csv(folder / "plots/finetune" / task / "seed42/predictions.csv")
        assert len(predictions) == 32  # the job's own task: its eval rows, scored
        assert metrics["finetuned.accuracy"] == pytest.approx(
            (predictions["label"] == predictions["finetuned"]).mean()
        )
        assert metrics["train_rows"] == 64
        assert (
            len(list(keyed.glob(f"finetune-{task}-*/models/{task}/seed42/model.safetensors"))) == 1
        )
    after = {p: p.stat().st_mtime for p in tracked.rglob("*.json")} if tracked.exists() else {}
    assert after == before  # the DVC-tracked outputs were not touched


def _printed_command(stderr: str) -> str:
    """The command a one-line refusal names: `... make it with `<command>``."""
    (line,) = stderr.strip().splitlines()
    return re.fullmatch(r"error: .*; make it with `(.+)`", line).group(1)


def _with_venv() -> dict[str, str]:
    """The environment in which `python` is this interpreter, as the printed command needs."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.slow  # four Hydra processes of the micro profile: about a minute
def test_a_refused_job_names_a_command_that_makes_its_input(tmp_path):
    """A micro job with neither its prepared data nor its model refuses in one line, leaves no
    job folder, and names the command that makes both; run as printed, it lets the job run."""
    runs, refused = tmp_path / "runs", tmp_path / "jobs" / "refused"
    job = ["stages.ablate", "task=rte", "experiment=micro", f"paths.runs={runs}"]
    result = _stage([*job, f"hydra.run.dir={refused}"])
    assert result.returncode == 2
    command = _printed_command(result.stderr)
    assert command == (
        f"python -m stages.prepare task=rte experiment=micro paths.runs={runs} && "
        f"python -m stages.finetune task=rte experiment=micro paths.runs={runs}"
    )
    assert not refused.exists()  # no empty job folder (the folder above is not its own)
    made = subprocess.run(
        ["bash", "-c", command], cwd=REPO, env=_with_venv(), capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr[-2000:]
    ran = _stage([*job, f"hydra.run.dir={tmp_path / 'jobs' / 'ablate'}"])
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (tmp_path / "jobs/ablate/metrics/ablate/rte/seed42.json").exists()


def _read_from(log: Path) -> str:
    """The folder of the fine-tuned model a job's log says it read."""
    return re.search(
        r"reads the fine-tuned model made under its settings in (\S+)", log.read_text()
    ).group(1)


@pytest.mark.slow  # four Hydra processes of the micro profile: about a minute
def test_an_analysis_sweep_reads_the_model_of_each_fine_tuning_job(micro_data, tmp_path):
    """`finetune -m finetune.learning_rate=a,b` keeps one model per job, and `ablate -m` over
    the same rates reads each job's own; each job folder names its task, model and profile."""
    rates = "finetune.learning_rate=0.0001,0.01"
    common = ["-m", "task=rte", "experiment=micro", rates, f"paths.data={micro_data}"]
    common += ["finetune.baselines.random_init=false", f"paths.runs={tmp_path / 'runs'}"]
    made = {}
    for stage in ("finetune", "ablate"):
        sweep = tmp_path / stage
        result = _stage([f"stages.{stage}", *common, f"hydra.sweep.dir={sweep}"])
        assert result.returncode == 0, result.stderr[-2000:]
        jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())
        assert jobs == ["0_rte_tiny_random_micro", "1_rte_tiny_random_micro"]
        made[stage] = [sweep / job / f"{stage}.log" for job in jobs]
    written = [
        re.search(r"what later stages read under (\S+)", log.read_text()).group(1)
        for log in made["finetune"]
    ]
    assert len(set(written)) == 2  # one model per fine-tuning job
    assert [_read_from(log) for log in made["ablate"]] == written


def test_a_refused_sweep_leaves_no_job_folder(tmp_path):
    """A sweep whose first job refuses (no model made under its settings) leaves no job
    folder; the sweep's folder keeps its multirun.yaml (a job removes nothing above its own
    folder)."""
    sweep = tmp_path / "multirun" / "day" / "sweep"
    runs = f"paths.runs={tmp_path / 'runs'}"
    sweep_dir = f"hydra.sweep.dir={sweep}"
    result = _stage(["stages.ablate", "-m", "task=rte,mrpc", "experiment=micro", runs, sweep_dir])
    assert result.returncode == 2
    assert "make it with `python -m stages.prepare task=rte experiment=micro" in result.stderr
    assert [p.name for p in sweep.iterdir()] == ["multirun.yaml"]
