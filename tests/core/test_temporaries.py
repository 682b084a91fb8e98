"""A write removes only the temporaries of writers that have ended: a live job's work in
progress beside the same file stays (parallel sweep jobs share keyed folders), and a full
disk fails in one line naming the file (pipeline/core/io.py, pipeline/core/owner.py)."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
from pathlib import Path

import pytest

from pipeline.core.errors import PipelineError
from pipeline.core.io import atomic_path, write_json
from tests.support.writers import half_written


def test_a_live_writers_temporary_stays_and_a_dead_ones_goes(tmp_path: Path) -> None:
    target = tmp_path / "seed42.json"
    process = half_written(target)
    try:
        (theirs,) = tmp_path.glob(".seed42.json.*.tmp")
        write_json(target, {"done": True})  # this job's write beside the live one
        assert theirs.read_bytes() == b"half"
    finally:
        os.kill(process.pid, signal.SIGKILL)  # kill -9: its temporary stays behind
        process.wait()
    write_json(target, {"done": 2})
    assert not theirs.exists()
    assert json.loads(target.read_text()) == {"done": 2}


def test_another_hosts_temporary_and_another_files_stay(tmp_path: Path) -> None:
    remote = tmp_path / ".seed42.json.node-7~4242~99.abcd1234.tmp"  # a job on another node
    other = tmp_path / ".other.json.abc.tmp"
    for path in (remote, other):
        path.write_text("{}")
    write_json(tmp_path / "seed42.json", {})
    assert remote.exists() and other.exists()


def test_a_full_disk_fails_in_one_line_naming_the_file(tmp_path: Path) -> None:
    target = tmp_path / "metrics" / "seed42.json"
    with pytest.raises(PipelineError) as raised, atomic_path(target) as tmp:
        tmp.write_text("{")
        raise OSError(errno.ENOSPC, "No space left on device")  # as write() reports it
    assert str(raised.value).startswith(f"no space left on the disk of {target} while writing")
    assert "\n" not in str(raised.value)
    assert not target.exists() and not list(target.parent.glob("*.tmp"))


def _full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_in_a_real_write_keeps_the_old_file_and_its_neighbours(
    tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "metrics"
    target, neighbour = folder / "seed42.json", folder / "seed7.json"
    write_json(target, {"old": 1})
    neighbour.write_text("{}")
    monkeypatch.setattr(Path, "write_text", _full_disk)  # what write_json writes with
    with pytest.raises(PipelineError) as raised:
        write_json(target, {"new": 2})
    assert str(raised.value).startswith(f"no space left on the disk of {target} while writing")
    assert "\n" not in str(raised.value)
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"old": 1}
    assert sorted(p.name for p in folder.iterdir()) == ["seed42.json", "seed7.json"]


def test_a_full_disk_while_filling_a_folder_removes_that_temporary_alone(tmp_path: Path) -> None:
    target = tmp_path / "models" / "seed42"
    target.mkdir(parents=True)
    (target / "model.safetensors").write_text("old weights")
    with (
        pytest.raises(PipelineError, match=f"of {re.escape(str(target))} while writing"),
        atomic_path(target) as tmp,
    ):
        tmp.mkdir()  # as save_pretrained makes its folder
        (tmp / "config.json").write_text("{}")
        _full_disk()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["model.safetensors", "models", "seed42"]
    assert (target / "model.safetensors").read_text() == "old weights"


def test_a_full_disk_before_the_temporary_exists_fails_in_one_line(
    tmp_path: Path, monkeypatch
) -> None:
    target = tmp_path / "plots" / "table.csv"
    monkeypatch.setattr("pipeline.core.io.tempfile.mkstemp", _full_disk)
    with pytest.raises(
        PipelineError, match=f"^no space left on the disk of {re.escape(str(target))} while"
    ):
        write_json(target, {})
    assert list((tmp_path / "plots").iterdir()) == []
