"""What a job runs: a stage's command exactly as `dvc repro` runs it, and nothing else.

DVC runs each line of a stage's `cmd` through the user's shell (`$SHELL -c`, bash without
its profile) from the stage's folder, with DVC_ROOT and DVC_STAGE set; `command_of` builds
those argument lists with DVC's own helpers, so the job cannot drift from `dvc repro`; its
environment adds only the runner's thread settings. The job itself never touches DVC: the
orchestrator checks, records and locks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from types import FrameType

from dvc.env import DVC_ROOT, DVC_STAGE
from dvc.stage import Stage
from dvc.stage.run import _enforce_cmd_list, _make_cmd, get_executable


@dataclass(frozen=True)
class Command:
    stage: str  # the stage's address, e.g. finetune@sst2-42
    text: str  # the stage's cmd as dvc.yaml resolves it
    lines: tuple[tuple[str, ...], ...]  # one argument list per line of cmd
    cwd: str
    env: tuple[tuple[str, str], ...]  # set on top of the worker's environment


def command_of(stage: Stage, extra_env: tuple[tuple[str, str], ...] = ()) -> Command:
    """The processes `dvc repro` would start for `stage`, in order; `extra_env` is set on top
    (the runner's thread settings, `ScaleConfig.job_environment`)."""
    executable = get_executable()
    lines = tuple(tuple(_make_cmd(executable, line)) for line in _enforce_cmd_list(stage.cmd))
    env = ((DVC_ROOT, stage.repo.root_dir), (DVC_STAGE, stage.addressing), *extra_env)
    text = stage.cmd if isinstance(stage.cmd, str) else "\n".join(stage.cmd)
    return Command(stage.addressing, text, lines, stage.wdir, env)


class Cancelled(Exception):
    """The job was told to stop (SIGTERM: the orchestrator cancelled it, or Slurm did)."""


def _cancel(signum: int, frame: FrameType | None) -> None:
    raise Cancelled(signal.Signals(signum).name)


def run_command(command: Command) -> int:
    """Runs in the worker: each line in turn, stopping at the first that fails. Returns the
    exit status (0: every line succeeded); the output goes to the worker's log. The command
    runs in a process group of its own; when the job is cancelled the whole group is ended,
    processes the stage started included."""
    signal.signal(signal.SIGTERM, _cancel)
    env = {**os.environ, **dict(command.env)}
    for argv in command.lines:
        process = subprocess.Popen(list(argv), cwd=command.cwd, env=env, start_new_session=True)
        try:
            status = process.wait()
        except BaseException:
            _end_group(process)
            raise
        if status:
            return status
    return 0


def _end_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
