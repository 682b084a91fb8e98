"""The DVC DAG run in parallel on submitit's local executor (`python -m pipeline.scale`)
leaves what a sequential `dvc repro` leaves; a failed stage stops only its descendants; an
interrupted run keeps what finished and a rerun completes the rest; one DVC user at a time.

The fast tests run a toy dvc.yaml (a matrix stage, a directory dep on their outputs, a metric
kept in git); the slow ones run the micro profile."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pipeline.core.errors import PipelineError
from pipeline.scale.settings import load_config
from tests.support.paths import REPO
from tests.support.repos import commit_repo, stale_stages

# part@a takes longer than part@b, so jobs end out of dvc repro's order; part@c sleeps while
# a file `slow` exists and fails while `fail_c` exists: neither is tracked, so the stage's
# definition is the same either way; so is `no_report`, which keeps report from writing its
# output. Each part writes when it ran, and its OpenMP wait policy, to `when/`, outside DVC's
# outputs.
TOY_DVC_YAML = """\
stages:
  source:
    cmd: mkdir -p data && echo hello > data/source.txt
    outs: [data/source.txt]
  part:
    matrix:
      item: ${items}
    cmd: >-
      mkdir -p when parts && date +%s.%N > when/${item.item}.start && sleep 1 &&
      if [ ${item.item} = a ]; then sleep 1; fi &&
      if [ ${item.item} = c ]; then echo $$ > when/c.pid; while [ -e slow ]; do sleep 0.2; done;
      test ! -e fail_c || { echo "error: c was told to fail" >&2; exit 3; }; fi &&
      cat data/source.txt > parts/${item.item}.txt && echo ${item.item} >> parts/${item.item}.txt &&
      date +%s.%N > when/${item.item}.end && echo "$OMP_WAIT_POLICY" > when/${item.item}.omp
    deps: [data/source.txt]
    outs:
      - parts/${item.item}.txt
  join:
    cmd: mkdir -p metrics && cat parts/*.txt > joined.txt && wc -l < joined.txt > metrics/lines.json
    deps: [parts]
    outs: [joined.txt]
    metrics:
      - metrics/lines.json: {cache: false}
  report:
    cmd: test -e no_report || sort -r joined.txt > report.txt
    deps: [joined.txt]
    outs:
      - report.txt: {cache: false}
"""
TOY_STAGES = ["source", "part@a", "part@b", "part@c", "join", "report"]


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **extra}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def _run(
    args: list[str], cwd: Path, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    result = subprocess.run(
        args, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=1800
    )
    if check:
        assert result.returncode == 0, f"{args} failed:\n{result.stdout[-3000:]}\n{result.stderr}"
    return result


def _scale(
    cwd: Path, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "pipeline.scale", "--jobs", "2"], cwd, check, env)


def _git_repo(root: Path) -> Path:
    commit_repo(root, _env(), ["dvc", "init", "-q"])
    return root


def _toy(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "dvc.yaml").write_text(TOY_DVC_YAML)
    (root / "params.yaml").write_text("items: [a, b, c]\n")
    return _git_repo(root)


def _lock(root: Path) -> dict:
    """The stages recorded in dvc.lock; none while DVC is still writing the file."""
    return (yaml.safe_load((root / "dvc.lock").read_text()) or {}).get("stages", {})


def _status_clean(root: Path) -> bool:
    return _run(["dvc", "status", "--json"], root).stdout.strip() == "{}"


def _file_hashes(root: Path, folders: list[str]) -> dict[str, str]:
    """Every file under the folders (and the cache), by path, with its md5."""
    hashes = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "timings" not in path.parts:
                hashes[str(path.relative_to(root))] = hashlib.md5(path.read_bytes()).hexdigest()
    return hashes


def _clone(source: Path, target: Path) -> Path:
    """A copy of the repo's committed state: the same commit, nothing run yet."""
    _run(["git", "clone", "-q", str(source), str(target)], source.parent)
    for key, value in (("user.email", "ci@example.com"), ("user.name", "ci")):
        _run(["git", "config", key, value], target)
    return target


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    return _toy(tmp_path_factory.mktemp("scale") / "toy")


@pytest.fixture(scope="module")
def toy_sequential(toy, tmp_path_factory) -> Path:
    """The toy run by a sequential `dvc repro`: what every parallel run must leave."""
    root = _clone(toy, tmp_path_factory.mktemp("scale") / "sequential")
    _run(["dvc", "repro"], root)
    return root


# --- the config ---------------------------------------------------------------------------


def test_each_stage_takes_the_resources_declared_for_its_name() -> None:
    config = load_config()
    assert config.resources_of("finetune@sst2-42") == config.resources["finetune"]
    assert config.resources_of("report") == config.resources["default"]
    slurm = load_config("slurm", ["slurm.partition=gpu"])
    assert slurm.executor.value == "slurm" and slurm.slurm.partition == "gpu"
    assert slurm.resources == config.resources  # declared once, in default.yaml


def test_jobs_get_the_threads_asked_for_and_wait_passively_when_they_share_cores() -> None:
    assert dict(load_config().job_environment()) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert load_config(overrides=["jobs=1"]).job_environment() == ()
    threads = dict(load_config(overrides=["threads=1"]).job_environment())
    assert threads == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    slurm = dict(load_config("slurm", ["threads=4"]).job_environment())
    assert slurm == {"OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}  # each job owns its cpus
    with pytest.raises(PipelineError, match="threads=0"):
        load_config(overrides=["threads=0"])


GRADIENTS = """
import hashlib, torch
from transformers import BertConfig, BertForSequenceClassification
torch.manual_seed(0)
config = BertConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=1024, vocab_size=1000)
model = BertForSequenceClassification(config)
ids = torch.randint(0, 1000, (16, 64))  # [B, T]
model(input_ids=ids, labels=torch.zeros(16, dtype=torch.long)).loss.backward()
print(hashlib.sha1(b"".join(p.grad.numpy().tobytes() for p in model.parameters())).hexdigest())
"""


@pytest.mark.slow  # two processes that each load torch and train a step: about 12 s
def test_passive_waiting_leaves_the_arithmetic_alone() -> None:
    """What the runner adds for jobs that share cores changes no bit of a training step."""
    hashes = {
        policy: _run([sys.executable, "-c", GRADIENTS], REPO, env=_env(**env)).stdout
        for policy, env in (("default", {}), ("passive", {"OMP_WAIT_POLICY": "PASSIVE"}))
    }
    assert hashes["default"] == hashes["passive"] and len(hashes["default"].strip()) == 40


def test_a_bad_setting_fails_in_one_line_naming_the_key() -> None:
    with pytest.raises(PipelineError) as error:
        load_config(overrides=["resources.finetune.gpu=1"])
    assert "resources.finetune.gpu" in str(error.value) and "\n" not in str(error.value)


# --- the toy DAG --------------------------------------------------------------------------


def test_a_parallel_run_leaves_what_dvc_repro_leaves(toy, toy_sequential, tmp_path) -> None:
    root = _clone(toy, tmp_path / "parallel")
    _scale(root)
    assert (root / "dvc.lock").read_text() == (toy_sequential / "dvc.lock").read_text()
    folders = ["data", "parts", "metrics", ".dvc/cache"]
    assert _file_hashes(root, folders) == _file_hashes(toy_sequential, folders)
    for name in ("joined.txt", "report.txt"):
        assert (root / name).read_text() == (toy_sequential / name).read_text()
    assert _status_clean(root)
    # independent stages ran at once: some two parts overlapped in time
    spans = [
        (float((root / f"when/{p}.start").read_text()), float((root / f"when/{p}.end").read_text()))
        for p in "abc"
    ]
    assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1 :])
    # jobs sharing the cores wait passively; a sequential run leaves the environment alone
    assert {(root / f"when/{p}.omp").read_text() for p in "abc"} == {"PASSIVE\n"}
    assert (toy_sequential / "when/a.omp").read_text() == "\n"
    again = _scale(root)  # nothing is stale: nothing runs
    assert "6 up to date" in again.stdout and "started" not in again.stdout
    for name in ("parts/a.txt", "joined.txt"):  # outputs in DVC's cache come back from it
        (root / name).unlink()
    restored = _scale(root)
    assert "2 restored from the run cache, 4 up to date" in restored.stdout, restored.stdout
    assert "started" not in restored.stdout and _status_clean(root)


def test_a_failing_stage_stops_its_descendants_and_keeps_the_rest(
    toy, toy_sequential, tmp_path
) -> None:
    root = _clone(toy, tmp_path / "failing")
    (root / "fail_c").touch()
    result = _scale(root, check=False)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "part@c" in errors[0] and "error: c was told to fail" in errors[0]
    assert set(_lock(root)) == {"source", "part@a", "part@b"}  # join and report never ran
    assert not (root / "joined.txt").exists()
    assert "2 skipped" in result.stdout

    (root / "fail_c").unlink()
    rerun = _scale(root)
    ran = set(re.findall(r"\] started +(\S+)", rerun.stdout))
    assert ran == {"part@c", "join", "report"}  # only what was missing
    assert _lock(root) == _lock(toy_sequential)
    assert _status_clean(root)


def test_a_stage_that_does_not_write_its_output_fails_in_one_line(toy, tmp_path) -> None:
    root = _clone(toy, tmp_path / "no-output")
    (root / "no_report").touch()
    result = _scale(root, check=False)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "report" in result.stderr
    assert "report.txt" in result.stderr and "does not exist" in result.stderr
    assert set(_lock(root)) == set(TOY_STAGES) - {"report"}  # the rest is recorded


@pytest.mark.slow  # 15-50 s end to end: run with `pytest -m slow` (CI, time allowing)
def test_an_interrupted_run_keeps_what_ended_and_a_rerun_completes_it(
    toy, toy_sequential, tmp_path
) -> None:
    root = _clone(toy, tmp_path / "interrupted")
    (root / "slow").touch()
    run = subprocess.Popen(
        [sys.executable, "-m", "pipeline.scale", "--jobs", "2"],
        cwd=root,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not ((root / "dvc.lock").exists() and {"part@a", "part@b"} <= set(_lock(root))):
        assert run.poll() is None and time.monotonic() < deadline, "the run ended early"
        time.sleep(0.5)
    # one DVC user at a time: a second run, and DVC itself, are refused while this one runs
    second = _scale(root, check=False)
    assert second.returncode == 2 and second.stderr.startswith("error: ")
    assert "lock" in second.stderr and len(second.stderr.strip().splitlines()) == 1
    assert _run(["dvc", "status"], root, check=False).returncode != 0

    pid = int((root / "when/c.pid").read_text())
    run.send_signal(signal.SIGTERM)
    out, _ = run.communicate(timeout=120)
    assert run.returncode == 130, out
    assert set(_lock(root)) == {"source", "part@a", "part@b"}
    assert "cancelled   part@c" in out
    with pytest.raises(ProcessLookupError):  # the interrupted stage's command is gone too
        os.kill(pid, 0)

    (root / "slow").unlink()
    rerun = _scale(root)
    ran = set(re.findall(r"\] started +(\S+)", rerun.stdout))
    assert ran == {"part@c", "join", "report"}
    assert _lock(root) == _lock(toy_sequential)
    assert _status_clean(root)


# --- the micro profile --------------------------------------------------------------------


@pytest.mark.slow
def test_the_micro_profile_in_parallel_matches_a_sequential_dvc_repro(micro_repo) -> None:
    origin, env = micro_repo  # env's DARK_SECRETS_DATA reaches every stage and submitit job
    sequential = _clone(origin, origin.parent / "sequential")
    _run(["dvc", "repro"], sequential, env=env)
    parallel = _clone(origin, origin.parent / "parallel")
    result = _scale(parallel, env=env)
    assert "failed" not in result.stdout
    assert stale_stages(parallel, env) == set()  # data_sources aside: it runs on every repro

    seq_files = _file_hashes(sequential, ["outputs", "data"])
    par_files = _file_hashes(parallel, ["outputs", "data"])
    assert seq_files.keys() == par_files.keys()
    differing = sorted(f for f in seq_files if seq_files[f] != par_files[f])
    assert differing == []  # every output byte-identical, the CNN and the report included
    assert _lock(parallel) == _lock(sequential)
    assert (
        _file_hashes(sequential, [".dvc/cache/files"]).keys()
        == _file_hashes(parallel, [".dvc/cache/files"]).keys()
    )
