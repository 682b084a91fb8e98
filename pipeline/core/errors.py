"""User-facing errors: one line that names the thing and the fix."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class PipelineError(Exception):
    """Bad input or setup. Stages print it as a single `error: ...` line and exit 2."""


@contextmanager
def exit_on_error() -> Iterator[None]:
    """What every command does with a `PipelineError`: print its one `error: ...` line on
    stderr and exit with status 2 (no traceback)."""
    try:
        yield
    except PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except PermissionError as error:
        print(f"error: {unwritable(error)}", file=sys.stderr)
        sys.exit(2)


def unwritable(error: PermissionError) -> str:
    """One line for a file or folder the run may not write (or read)."""
    return (
        f"permission denied: {error.filename}; make its folder writable, or point "
        "paths.outputs (paths.data), or hydra.run.dir for a Hydra run, at one that is"
    )
