"""How the workspace's outputs differ from the checked-out commit's (pipeline/report/
committed.py): files and metric values counted, and git's absence said, never passed over."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from pipeline.report.committed import COMPARE, NoCommit, drift, drift_notice, extract
from pipeline.report.html import render_report


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
    found = drift(repo / "outputs")
    assert (found.files, found.metric_values) == (0, 0)
    assert found.sentence() == ""


def test_differing_values_and_files_are_counted_with_the_command(repo):
    metrics = repo / "outputs" / "metrics" / "a.json"
    metrics.write_text(json.dumps({"x": 0.1234568, "nested": {"y": 2, "z": "text"}, "w": 1}))
    (repo / "outputs" / "t.csv").write_text("a\n2\n")
    found = drift(repo / "outputs")
    assert (found.files, found.metric_files, found.metric_values) == (2, 1, 2)  # x moved, w new
    assert "2 files" in found.sentence() and "2 metric values in 1 metrics file " in (
        found.sentence()
    )
    assert f"`{COMPARE}`" in found.sentence()


def test_a_deleted_metrics_file_counts_each_of_its_values(repo):
    (repo / "outputs" / "metrics" / "a.json").unlink()
    assert drift(repo / "outputs").metric_values == 3


def test_no_repository_is_said_not_passed_over(tmp_path):
    with pytest.raises(NoCommit, match="failed"):
        drift(tmp_path)


def test_a_path_the_commit_lacks_is_named(repo, tmp_path):
    with pytest.raises(NoCommit, match=r"outputs/new\.csv"):
        extract(repo, [Path("outputs/t.csv"), Path("outputs/new.csv")], tmp_path / "x")


def test_a_differing_rerun_says_so_once_in_the_log_and_first_on_the_page(repo, caplog):
    (repo / "outputs" / "t.csv").write_text("a\n2\n")
    with caplog.at_level(logging.INFO, logger="pipeline.report.committed"):
        notice = drift_notice(repo / "outputs")
    assert [r.getMessage() for r in caplog.records] == [notice]
    assert "1 file," in notice
    page = render_report(repo / "outputs", "run", "seed: 42\n", notice=notice)
    shown = page.index('<p class="notice">')
    assert shown < page.index('<nav class="contents">') < page.index("<section")
    assert f"<code>{COMPARE}</code>" in page[shown:]


def test_outputs_as_committed_add_nothing_to_the_page(repo, caplog):
    with caplog.at_level(logging.INFO, logger="pipeline.report.committed"):
        assert drift_notice(repo / "outputs") == ""
    assert not caplog.records
    assert 'class="notice"' not in render_report(repo / "outputs", "run", "seed: 42\n")


def test_outputs_outside_git_say_they_were_not_compared(tmp_path):
    (tmp_path / "outputs").mkdir()
    assert "not compared with a commit" in drift_notice(tmp_path / "outputs")
