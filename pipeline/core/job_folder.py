"""A Hydra job's own folder: whether this run made it, what a refused job removes from it,
and the command that resumes an interrupted job in it (the one line Ctrl-C prints).

Hydra writes `.hydra/` (config.yaml, hydra.yaml, overrides.yaml) and the job's log before the
stage starts. The folder counts as made by this run when that is all it holds then, with the
log still empty: no earlier run and no user wrote in it. A refused job removes that folder
only while it still holds nothing else; it never removes a file it did not make, nor any
folder above its own (a user's notes.log or a sweep's multirun.yaml beside it stay).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.failure import close_progress_bars, exit_code

HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")  # what Hydra writes in .hydra/

# The variable conf/config.yaml reads into every job and sweep folder's name, so that two jobs
# started in the same second never share one; set afresh by each command that starts jobs,
# and inherited by the processes its launcher starts.
RUN_ID_VARIABLE = "DARK_SECRETS_RUN_ID"


def new_run_id() -> None:
    """Give the jobs this command starts a folder suffix of their own (6 random hex digits)."""
    os.environ[RUN_ID_VARIABLE] = secrets.token_hex(3)


@dataclass(frozen=True)
class JobFolder:
    """A Hydra job's folder, as the stage found it when it started."""

    path: Path
    log: Path  # the job's log, which Hydra writes in the folder
    made_here: bool  # nothing but what Hydra wrote for this job was in it at the start

    @classmethod
    def at_start(cls, path: Path, log: Path) -> JobFolder:
        hydra = path / ".hydra"
        made_here = (
            {entry.name for entry in path.iterdir()} <= {".hydra", log.name}
            and {entry.name for entry in hydra.iterdir()} <= set(HYDRA_FILES)
            and (not log.exists() or log.stat().st_size == 0)
        )
        return cls(path, log, made_here)

    def remove_if_untouched(self) -> None:
        """Remove the folder when this run made it and it holds only Hydra's files for this
        job; else leave every file in place."""
        if not self.made_here or not self.path.is_dir():
            return
        if any(entry.name not in (".hydra", self.log.name) for entry in self.path.iterdir()):
            return
        hydra = self.path / ".hydra"
        if hydra.is_dir() and any(e.name not in HYDRA_FILES for e in hydra.iterdir()):
            return
        for name in HYDRA_FILES:
            (hydra / name).unlink(missing_ok=True)
        if hydra.is_dir():
            hydra.rmdir()
        self.log.unlink(missing_ok=True)
        self.path.rmdir()  # fails, removing nothing more, if a file appeared meanwhile

    @contextlib.contextmanager
    def ends(self, stage: str, overrides: Sequence[str]) -> Iterator[None]:
        """A job of `stage` stopped by Ctrl-C (or SIGTERM) prints the one command that resumes
        it in this folder; one that fails otherwise removes the folder if untouched."""
        try:
            yield
        except KeyboardInterrupt as stop:
            close_progress_bars()
            command = resume_command(stage, overrides, self.path)
            print(f"interrupted; resume this job in its folder with: {command}", file=sys.stderr)
            sys.exit(exit_code(stop))
        except BaseException:
            self.remove_if_untouched()
            raise


def resume_command(stage: str, overrides: Sequence[str], folder: Path) -> str:
    """The command that runs job `overrides` of `stage` again in its own `folder`, where it
    resumes from the checkpoints it keeps there."""
    kept = [arg for arg in overrides if not arg.startswith("hydra.run.dir=")]
    return shlex.join(["python", "-m", f"stages.{stage}", *kept, f"hydra.run.dir={folder}"])
