"""How the workspace's outputs differ from the checked-out commit's (pipeline/report/
committed.py): files and metric values counted, and git's absence said, never passed over."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pipeline.report.committed import COMPARE, NoCommit, drift, extract


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         *args],
        check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository whose commit holds a metrics file and a table under outputs/."""
    (tmp_path / "outputs" / "metrics").mkdir(parents=True)
    (tmp_path / "outputs" / "metrics" / "a.json").write_text(
        json.dumps({"x": 0.1234567, "nested": {"y": 2, "z": "text"}})
    )
    (tmp_path / "outputs" / "t.csv").write_text("a\n1\n")
    _git(tmp_path, "init", "--quiet")
    _git(tmp_path, "add", "outputs")
    _git(tmp_path, "commit", "--quiet", "-m", "run")
    return tmp_path


def test_an_unchanged_workspace_says_nothing(repo):
    found = drift(repo)
    assert (found.files, found.metric_values) == (0, 0)
    assert found.sentence() == ""


def test_differing_values_and_files_are_counted_with_the_command(repo):
    metrics = repo / "outputs" / "metrics" / "a.json"
    metrics.write_text(json.dumps({"x": 0.1234568, "nested": {"y": 2, "z": "text"}, "w": 1}))
    (repo / "outputs" / "t.csv").write_text("a\n2\n")
    found = drift(repo)
    assert (found.files, found.metric_files, found.metric_values) == (2, 1, 2)  # x moved, w new
    assert "2 files" in found.sentence() and "2 metric values in 1 metrics files" in (
        found.sentence()
    )
    assert f"`{COMPARE}`" in found.sentence()


def test_a_deleted_metrics_file_counts_each_of_its_values(repo):
    (repo / "outputs" / "metrics" / "a.json").unlink()
    assert drift(repo).metric_values == 3


def test_no_repository_is_said_not_passed_over(tmp_path):
    with pytest.raises(NoCommit, match="failed"):
        drift(tmp_path)


def test_a_path_the_commit_lacks_is_named(repo, tmp_path):
    with pytest.raises(NoCommit, match=r"outputs/new\.csv"):
        extract(repo, [Path("outputs/t.csv"), Path("outputs/new.csv")], tmp_path / "x")
