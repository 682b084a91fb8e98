"""A Hydra job's folder is its own: a refused or interrupted job leaves every file it did not
make (a user's notes.log, slurm-1.log, multirun.yaml beside and above it), two jobs started
together keep a folder each, an interrupted job prints the command that resumes it, and a
parallel sweep whose jobs make the same keyed input completes (pipeline/core/job_folder.py,
pipeline/core/locks.py, pipeline/core/io.py)."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.paths import REPO

USER_FILES = {"notes.log": "notes\n", "slurm-1.log": "slurm\n", "multirun.yaml": "mine: 1\n"}
MICRO = ["task=rte", "experiment=micro", "finetune.baselines.random_init=false"]


def _env() -> dict[str, str]:
    """The environment of a stage started outside the repository, as `python` on a path."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PYTHONPATH": str(REPO), "PATH": path}


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    """Start a stage in `cwd`, with the repository's params.yaml (the DVC run's settings),
    against which a job reads `paths.data` as given."""
    shutil.copy(REPO / "params.yaml", cwd / "params.yaml")
    return subprocess.Popen(
        [sys.executable, "-m", *args], cwd=cwd, env=_env(), stderr=subprocess.PIPE, text=True
    )


def _plant(*folders: Path) -> dict[Path, str]:
    planted = {}
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in USER_FILES.items():
            (folder / name).write_text(text)
            planted[folder / name] = text
    return planted


def _unchanged(planted: dict[Path, str]) -> bool:
    return all(path.exists() and path.read_text() == text for path, text in planted.items())


def test_a_refused_job_and_sweep_leave_the_users_files(tmp_path: Path) -> None:
    """No input made under the job's settings: both refuse; only the job folders they made
    go, never a folder above them."""
    planted = _plant(tmp_path / "expdir", tmp_path / "swp" / "study", tmp_path / "swp")
    runs = f"paths.runs={tmp_path / 'runs'}"
    job = tmp_path / "expdir" / "job1"
    one = _start(["stages.ablate", *MICRO, runs, f"hydra.run.dir={job}"], tmp_path)
    sweep = tmp_path / "swp" / "study" / "sweep1"
    many = _start(
        [
            "stages.ablate",
            "-m",
            "task=rte,mrpc",
            "experiment=micro",
            runs,
            f"hydra.sweep.dir={sweep}",
        ],
        tmp_path,
    )
    for process in (one, many):
        assert process.wait(timeout=300) == 2, process.stderr.read()[-2000:]
    assert not job.exists()
    assert not (sweep / "0_rte_tiny_random_micro").exists()
    assert (sweep / "multirun.yaml").exists()  # the sweep's own record, one level up, stays
    assert _unchanged(planted)


def _terminated_when(process: subprocess.Popen, ready: Path) -> str:
    """Send SIGTERM once `ready` exists; the process's stderr."""
    deadline = time.monotonic() + 300
    while not ready.exists():
        assert process.poll() is None, process.stderr.read()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr[-2000:]
    return stderr


def _results(job: Path) -> dict[str, bytes]:
    where = "finetune/rte/seed42"
    return {
        name: (job / name).read_bytes()
        for name in (
            f"metrics/{where}.json",
            f"plots/{where}/predictions.csv",
            f"plots/{where}/loss.csv",
        )
    }


@pytest.mark.slow  # three fine-tuning jobs of the micro profile: about a minute
def test_sigterm_keeps_the_users_files_and_the_printed_command_resumes_to_the_same_bytes(
    micro_data: Path, tmp_path: Path
) -> None:
    planted = _plant(tmp_path / "exp42")
    long = [*MICRO, "finetune.epochs=30", f"paths.data={micro_data}"]
    keyed = [f"paths.runs={tmp_path / 'runs'}"]
    whole = tmp_path / "whole"
    ran = _start(["stages.finetune", *long, *keyed, f"hydra.run.dir={whole}"], tmp_path)
    assert ran.wait(timeout=300) == 0, ran.stderr.read()[-2000:]
    (model,) = (tmp_path / "runs").rglob("model.safetensors")
    expected, weights = _results(whole), model.read_bytes()

    job = tmp_path / "exp42" / "job"
    stopped = _start(["stages.finetune", *long, *keyed, f"hydra.run.dir={job}"], tmp_path)
    checkpoint = job / "checkpoints/finetune/rte/seed42/finetuned/checkpoint.pt"
    stderr = _terminated_when(stopped, checkpoint)
    assert _unchanged(planted) and (job / "finetune.log").exists()
    last = stderr.strip().splitlines()[-1]
    prefix = "interrupted; resume this job in its folder with: "
    assert last.startswith(prefix), stderr[-2000:]
    command = last.removeprefix(prefix)
    assert shlex.split(command)[-1] == f"hydra.run.dir={job}"

    resumed = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=_env(), capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resum" in (job / "finetune.log").read_text()  # it went on from the checkpoint
    assert _results(job) == expected and model.read_bytes() == weights
    assert _unchanged(planted)


def _job_folders(root: Path) -> list[Path]:
    return sorted(path.parent for path in root.rglob(".hydra"))


@pytest.mark.slow  # two fine-tuning jobs side by side: about 30 s
def test_two_jobs_started_together_keep_a_folder_each(micro_data: Path, tmp_path: Path) -> None:
    """Both use the default job folder (named by the second they started in)."""
    rates = ("0.003", "0.0003")
    jobs = [
        _start(
            [
                "stages.finetune",
                *MICRO,
                f"paths.data={micro_data}",
                f"paths.runs={tmp_path / 'keyed'}",
                f"finetune.learning_rate={rate}",
            ],
            tmp_path,
        )
        for rate in rates
    ]
    for process in jobs:
        assert process.wait(timeout=300) == 0, process.stderr.read()[-2000:]
    folders = _job_folders(tmp_path / "runs")
    assert len(folders) == 2
    found = set()
    for folder in folders:
        overrides = yaml.safe_load((folder / ".hydra/overrides.yaml").read_text())
        (rate,) = [o.split("=")[1] for o in overrides if o.startswith("finetune.learning_rate=")]
        found.add(rate)
        assert (folder / "metrics/finetune/rte/seed42.json").exists()
    assert found == set(rates)
    assert len(list((tmp_path / "keyed").rglob("model.safetensors"))) == 2


@pytest.mark.slow  # four fine-tuning jobs on two workers: about a minute
def test_a_parallel_sweep_making_one_keyed_model_completes_under_the_stages_name(
    micro_data: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    process = _start(
        [
            "stages.finetune",
            "-m",
            *MICRO,
            f"paths.data={micro_data}",
            f"paths.runs={tmp_path / 'keyed'}",
            "ablate.mode=uniform,zero",
            "ablate.batch_size=4,8",
            "hydra/launcher=local_parallel",
            "hydra.launcher.n_jobs=4",
            f"hydra.sweep.dir={sweep}",
        ],
        tmp_path,
    )
    assert process.wait(timeout=600) == 0, process.stderr.read()[-3000:]
    folders = _job_folders(sweep)
    assert len(folders) == 4
    for folder in folders:
        assert (folder / "timings/finetune.json").exists()
        assert "finetune took" in (folder / "finetune.log").read_text()
    assert not list(sweep.rglob("*popen_loky*"))
    assert len(list((tmp_path / "keyed").rglob("model.safetensors"))) == 1
