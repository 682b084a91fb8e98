"""A mistyped `dvc exp run -S` fails when DVC composes conf/, in one error line (not DVC's
"unexpected error") that names the value and what would be valid, and leaves the workspace as
it was: prepared data, outputs, params.yaml and dvc.lock (DVC deletes a stage's outputs before
running it, so a typo caught only by a stage would cost them)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.support.repos import run_ok

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prepared_repo(micro_repo) -> tuple[Path, dict[str, str]]:
    """The micro profile in a fresh git repo, with `prepare` run and its results committed."""
    root, env = micro_repo
    run_ok(["dvc", "repro", "prepare"], root, env)
    run_ok(["git", "add", "-A"], root, env)
    run_ok(["git", "commit", "-qm", "prepared"], root, env)
    return root, env


def workspace(root: Path) -> dict[str, str]:
    """Digest of every file outside .git and DVC's cache and temporaries."""
    skipped = (root / ".git", root / ".dvc" / "cache", root / ".dvc" / "tmp")
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not any(path.is_relative_to(s) for s in skipped)
    }


@pytest.mark.parametrize(
    ("override", "first_line"),
    [
        ("tasks=[sst3]", "Invalid value 'sst3', expected one of [cola, mnli, mrpc"),
        ("tasks=[mrpc,rtee]", "Invalid value 'rtee'"),
        ("model=minilm", "unknown model 'minilm'; valid models: albert_base_v2"),
        ("experiment=mirco", "unknown experiment 'mirco'; valid experiments: "),
        (
            "finetune.epoch=3",
            "unknown config key `finetune.epoch`; did you mean `finetune.epochs`?",
        ),
        ("seeds=[x]", "Value 'x' of type 'str' could not be converted to Integer"),
        ("seeds=[43]", "`seeds` [43] does not contain the primary `seed` 42; add 42"),
        ("measures.measures=[weight]", "Invalid value 'weight', expected one of [weights"),
    ],
)
def test_a_mistyped_experiment_stops_before_dvc_touches_the_workspace(
    prepared_repo, override: str, first_line: str
) -> None:
    root, env = prepared_repo
    before = workspace(root)
    assert any(name.startswith("data/glue/mrpc/") for name in before)
    result = subprocess.run(
        ["dvc", "exp", "run", "-S", override],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and first_line in errors[0], result.stderr
    assert "unexpected error" not in result.stderr and "dvc.org/support" not in result.stderr
    assert "failed to reproduce" not in result.stderr  # no stage ran
    assert workspace(root) == before
    status = run_ok(["git", "status", "--porcelain"], root, env)
    assert status == "", status
