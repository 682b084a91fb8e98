"""Locks on the keyed folders of inputs that Hydra jobs share on purpose (pipeline/core/
input_keys.py): a job that makes one holds it exclusively for its whole run, a job that reads
one holds it shared, so a second job under the same settings never makes it beside the
first, and a reader never reads one half made. A job waits for a lock another job holds,
saying so in its log. A job's locks are freed when it ends (`for_the_job`): a launcher's
worker process (joblib's) runs job after job and outlives each, so a lock kept until the
process ended would block every later job needing that folder. The operating system frees
a lock when its process ends, however it ends, so a killed job blocks nobody either.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"  # in the keyed folder, beside its settings.yaml

_held: dict[Path, int] = {}  # folder -> the open lock file, held until the job ends


def hold(folder: Path, *, exclusive: bool, what: str) -> None:
    """Hold the lock of `folder` (made if missing) until the job ends, waiting while
    another job holds it in a way that excludes this one; `what`: the input it holds, for
    the log line a wait writes."""
    key = folder.resolve()
    if key in _held:
        return
    folder.mkdir(parents=True, exist_ok=True)
    lock = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        fcntl.flock(lock, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        log.info("waits for another job, which is making the %s in %s", what, folder)
        fcntl.flock(lock, mode)
    _held[key] = lock


@contextmanager
def for_the_job() -> Iterator[None]:
    """Free every lock taken inside the block when it ends, however it ends."""
    try:
        yield
    finally:
        while _held:
            os.close(_held.popitem()[1])  # closing the lock file frees its lock
