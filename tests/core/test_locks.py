"""The keyed inputs' locks (pipeline/core/locks.py): a job's locks are freed when the job ends,
not when its process does (a launcher's worker process runs job after job)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from pipeline.core import locks


def _free(folder: Path) -> bool:
    """True if another holder could take `folder`'s lock exclusively now."""
    other = os.open(folder / locks.LOCK_FILE, os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(other)


def test_a_jobs_locks_are_freed_when_it_ends_and_the_next_job_takes_them_again(
    tmp_path: Path,
) -> None:
    made, read = tmp_path / "model", tmp_path / "data"
    for _job in range(2):  # two jobs, one after the other, in one worker process
        with locks.for_the_job():
            locks.hold(made, exclusive=True, what="fine-tuned model")
            locks.hold(read, exclusive=False, what="prepared data")
            assert not _free(made) and not _free(read)
        assert _free(made) and _free(read)


def test_a_job_that_fails_frees_its_locks_too(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), locks.for_the_job():
        locks.hold(tmp_path, exclusive=True, what="fine-tuned model")
        raise RuntimeError("the job failed")
    assert _free(tmp_path)
