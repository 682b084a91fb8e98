"""Shared fixtures: offline data location, tokenizer, the tiny random BERT's config, and the
micro profile as single stages (`micro_stage`) or as a committed git repo (`micro_repo`).
Tiny BERTs built from a shape and configs composed once per session: tests/builders.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pipeline.core.schema import load_model
from pipeline.core.stage import StageRun
from pipeline.models.loading import load_tokenizer
from tests.builders import micro_run

REPO = Path(__file__).resolve().parent.parent
torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The offline data sets (../shared/data, or $DARK_SECRETS_DATA). Where they are missing
    a test that needs them is skipped, and says so in the summary; in CI (CI=true in the
    environment, as CI services set it) it fails instead, so no data test goes unrun there."""
    path = Path(os.environ.get("DARK_SECRETS_DATA", REPO.parent / "shared" / "data"))
    if not path.exists():
        missing = f"offline data not found at {path}; set DARK_SECRETS_DATA to its folder"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(missing)
        pytest.skip(missing)
    return path


@pytest.fixture(scope="session")
def tiny_model_cfg():
    """conf/model/tiny_random.yaml: the micro profile's random BERT (2 layers x 4 heads, the
    tokenizer's vocabulary), built by the project's loader (pipeline/models/loading.py)."""
    return load_model("tiny_random")


@pytest.fixture(scope="session")
def minilm_cfg():
    return load_model("minilm_l6")


@pytest.fixture(scope="session")
def tokenizer(minilm_cfg):
    """The uncased WordPiece tokenizer shipped with the MiniLM package."""
    return load_tokenizer(minilm_cfg)


def run_ok(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 1800) -> str:
    """Run a command; fail the test with its output tails unless it exits 0 within `timeout` s."""
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def copy_project(root: Path) -> None:
    """Copy the project's files (no outputs, prepared data or dvc.lock) to `root`."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True
    ).stdout.split()
    for name in listed:
        if name.startswith(("outputs/", "data/glue")) or name == "dvc.lock":
            continue
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)


def micro_git_repo(root: Path, shared_data: Path, *overrides: str) -> dict[str, str]:
    """Copy the project's files into a fresh git repo at `root`, composed for the micro
    profile (plus `overrides`, e.g. `model=tiny_albert`) and committed; return the
    environment to run `dvc` and the stages in it."""
    copy_project(root)
    env = {**os.environ, "DARK_SECRETS_DATA": str(shared_data), "PYTHONPATH": str(root)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    commit_repo(root, env, [sys.executable, "-m", "tools.params", "experiment=micro", *overrides])
    return env


def commit_repo(root: Path, env: dict[str, str], *setup: list[str]) -> None:
    """Make `root` a git repo, run each `setup` command in it, and commit every file."""
    for command in (
        ["git", "init", "-q"],
        ["git", "config", "user.email", "ci@example.com"],
        ["git", "config", "user.name", "ci"],
        *setup,
        ["git", "add", "-A"],
        ["git", "commit", "-qm", "start"],
    ):
        run_ok(command, root, env)


@pytest.fixture(scope="module")
def micro_repo(tmp_path_factory, shared_data) -> tuple[Path, dict[str, str]]:
    """(root, env): the project's files in a fresh git repo, composed for the micro profile
    and committed, with the environment to run `dvc` and the stages in it."""
    root = tmp_path_factory.mktemp("micro") / "repo"
    return root, micro_git_repo(root, shared_data)


MicroStage = Callable[..., StageRun]


@pytest.fixture
def micro_stage(tmp_path: Path) -> MicroStage:
    """Makes one stage's run of the micro profile on the CPU, as DVC runs it, with
    `paths.data` and `paths.outputs` under the test's tmp_path: `micro_stage(task, settings)`
    takes the task of a per-task stage (or none) and settings by dotted key."""

    def make(task: str | None = None, settings: dict[str, Any] | None = None) -> StageRun:
        return micro_run(tmp_path / "data", tmp_path / "outputs", task, settings)

    return make
