"""The restore advice brings back what the workspace's dvc.lock records (pipeline/core/failure.py):
the committed copies of the outputs kept in git only where HEAD's dvc.lock records them as the
workspace's does, else a plain word that they cannot be restored and the `dvc repro` that
remakes them; params.yaml with them where `dvc exp run -S` rewrote it; the plain advice where
there is no repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from pipeline.core.failure import restore_command

STAGE = {"cmd": "true", "outs": ["model.bin", {"table.csv": {"cache": False}}]}


def _lock(table_md5: str) -> str:
    outs = [{"path": "model.bin", "md5": "a" * 32}, {"path": "table.csv", "md5": table_md5}]
    return yaml.safe_dump({"schema": "2.0", "stages": {"make": {"cmd": "true", "outs": outs}}})


def _repo(root: Path) -> Path:
    """A git repository whose HEAD holds dvc.yaml, dvc.lock and params.yaml of one stage."""
    root.mkdir()
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"make": STAGE}}))
    (root / "dvc.lock").write_text(_lock("b" * 32))
    (root / "params.yaml").write_text("epochs: 2\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "run"], check=True)
    return root


def test_the_committed_copies_when_heads_lock_records_them(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    advice = restore_command("make", None, None, root / "dvc.yaml")
    assert advice == "dvc checkout make && git checkout HEAD -- table.csv"


def test_an_uncommitted_runs_outputs_kept_in_git_are_named_unrestorable(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    (root / "dvc.lock").write_text(_lock("c" * 32))  # a rerun, not committed, remade table.csv
    advice = restore_command("make", None, None, root / "dvc.yaml")
    assert advice == (
        "dvc checkout make; table.csv of this uncommitted run are kept in no commit and "
        "cannot be restored: `dvc repro make` makes them again"
    )


def test_params_rewritten_by_dvc_exp_run_are_restored_with_the_outputs(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    (root / "params.yaml").write_text("epochs: 0\n")  # `dvc exp run -S epochs=0`
    advice = restore_command("make", None, None, root / "dvc.yaml")
    assert advice == "dvc checkout make && git checkout HEAD -- table.csv params.yaml"


def test_without_a_repository_the_advice_is_the_plain_one(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"make": STAGE}}))
    (root / "dvc.lock").write_text(_lock("c" * 32))
    advice = restore_command("make", None, None, root / "dvc.yaml")
    assert advice == "dvc checkout make && git checkout HEAD -- table.csv"
