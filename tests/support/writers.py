"""A writer caught inside `atomic_path`, for the tests of what its temporaries become."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.paths import REPO


def half_written(target: Path) -> subprocess.Popen:
    """Another process inside atomic_path(target), its temporary half written; it sleeps
    there until the test kills it."""
    code = textwrap.dedent(
        f"""
        import time
        from pipeline.core.io import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_bytes(b"half")
            print("writing", flush=True)
            time.sleep(60)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    assert process.stdout.readline().strip() == "writing"
    return process
