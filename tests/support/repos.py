"""Commands run for a test, and copies of the project as git repos to run DVC and the stages in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline.dag.declarations import STAGES
from tests.support.paths import REPO

# stages DVC reruns on every `dvc repro` (they read what DVC cannot track): `dvc status`
# lists them as "always changed" however up to date the rest is
ALWAYS_CHANGED = frozenset(stage.name for stage in STAGES if stage.always_changed)


def run_ok(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 1800) -> str:
    """Run a command; fail the test with its output tails unless it exits 0 within `timeout` s."""
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def stale_stages(root: Path, env: dict[str, str]) -> set[str]:
    """The stages `dvc status` lists in `root`, except those declared always changed."""
    listed = json.loads(run_ok(["dvc", "status", "--json"], root, env))
    assert ALWAYS_CHANGED.issuperset(n for n, why in listed.items() if "always changed" in why)
    return set(listed) - ALWAYS_CHANGED


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
