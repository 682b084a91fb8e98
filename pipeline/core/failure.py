"""What a stage that stopped prints last: the one command that brings back the outputs DVC
removed before running it, and, after Ctrl-C, where the next run resumes.

DVC deletes a stage's outputs before its command runs, so a failed `dvc repro` leaves them
gone while dvc.lock still records them. The advice brings back what the workspace's
dvc.lock records, never another run's files: `dvc checkout <stage>` restores the cached ones
from the DVC cache; the ones kept in git (tables, figures, metrics: `cache: false`) come back
with `git checkout HEAD -- <paths>` only when HEAD's dvc.lock records them as the
workspace's does. Where it does not (a rerun not yet committed had already remade them), git
holds no copy of them: the advice says so and gives the `dvc repro <stage>` that remakes
them. When params.yaml differs from HEAD's while the stage's lock entry is HEAD's (`dvc exp
run -S` rewrote it before the stage failed), the restore takes params.yaml back to the
values that entry was made with. Without git or a repository the advice is the plain one.
The costly cached outputs (models, attention stores, the pattern classifier) are declared
`persist` and written whole under a temporary name, so DVC leaves them in place and a
failed run keeps them.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import yaml

ITEMS = {"task": "${item.task}", "seed": "${item.seed}"}  # dvc.yaml's matrix placeholders


def restore_command(
    name: str, task: str | None, seed: int | None, dvc_yaml: Path = Path("dvc.yaml")
) -> str | None:
    """The command that restores the outputs of stage `name` (of `task` and `seed` for a
    matrix stage) that DVC removed before the run, as the workspace's dvc.lock records them
    (module docstring); None when dvc.yaml does not declare the stage or it removes nothing."""
    spec = _declared(name, dvc_yaml)
    if spec is None:
        return None
    values = {"task": task, "seed": None if seed is None else str(seed)}
    address = stage_address(name, spec, values)
    in_git, cached = removed_outputs(spec, values)
    root = dvc_yaml.parent
    head_lock, ours = _head_text(root, "dvc.lock"), _lock_entry(_read(root / "dvc.lock"), address)
    commands = [f"dvc checkout {address}"] if cached else []
    remade = head_lock is not None and ours is not None and _lock_entry(head_lock, address) != ours
    if in_git and remade:  # by a run not yet committed: no commit holds these files
        unrestorable = (
            f"{' '.join(in_git)} of this uncommitted run are kept in no commit and cannot be "
            f"restored: `dvc repro {address}` makes them again"
        )
        return "; ".join([" && ".join(commands), unrestorable] if commands else [unrestorable])
    head_params = _head_text(root, "params.yaml")
    if in_git and head_params is not None and _read(root / "params.yaml") != head_params:
        in_git = [*in_git, "params.yaml"]  # the values the lock entry (HEAD's) was made with
    commands += [f"git checkout HEAD -- {' '.join(in_git)}"] if in_git else []
    return " && ".join(commands) or None


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _head_text(root: Path, name: str) -> str | None:
    """File `name` as HEAD holds it in the repository at `root`; None where git cannot say."""
    try:
        shown = subprocess.run(
            ["git", "-C", str(root), "show", f"HEAD:./{name}"], capture_output=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return shown.stdout.decode("utf-8") if shown.returncode == 0 else None


def _lock_entry(text: str | None, address: str) -> list | None:
    """The outputs (path and md5) a dvc.lock text records for stage `address`; None where it
    records no such stage or cannot be read."""
    try:
        stage = (yaml.safe_load(text or "") or {}).get("stages", {}).get(address)
    except yaml.YAMLError:
        return None
    if not stage:
        return None
    return sorted(
        (out.get("path"), out.get("md5"))
        for out in [*stage.get("outs", []), *stage.get("metrics", [])]
    )


def _declared(name: str, dvc_yaml: Path) -> dict | None:
    """Stage `name` as dvc.yaml declares it; None without dvc.yaml or the stage."""
    if not dvc_yaml.exists():
        return None
    return (yaml.safe_load(dvc_yaml.read_text(encoding="utf-8")).get("stages") or {}).get(name)


def removed_outputs(spec: dict, values: dict[str, str | None]) -> tuple[list[str], list[str]]:
    """The outputs DVC removes before running a stage of dvc.yaml `spec` (with the matrix
    `values`): those kept in git, and those in the DVC cache (a persisted one is kept)."""

    def concrete(path: str) -> str:
        for key, placeholder in ITEMS.items():
            path = path.replace(placeholder, str(values[key]))
        return path

    in_git, cached = [], []
    for entry in [*spec.get("outs", []), *spec.get("metrics", [])]:
        path, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        if options.get("cache") is False:
            in_git.append(concrete(path))
        elif not options.get("persist"):  # a persisted output is kept while the stage runs
            cached.append(concrete(path))
    return in_git, cached


def stage_address(name: str, spec: dict, values: dict[str, str | None]) -> str:
    """`finetune@rte-42`: the stage of dvc.yaml `spec` as `dvc repro` names it."""
    matrix = [key for key in spec.get("matrix", {}) if key in values]
    return name + (f"@{'-'.join(str(values[k]) for k in matrix)}" if matrix else "")


def close_progress_bars() -> None:
    """Close the progress bars a stopped stage left open, so that the lines it prints last
    start on lines of their own (an open bar ends without a newline)."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def restore_line(command: str) -> str:
    return f"restore the outputs DVC removed before this run: {command}"


def interrupted_line(checkpoints: Path | None) -> str:
    """The one line Ctrl-C prints: where the next run resumes, if it keeps checkpoints."""
    if checkpoints is not None and checkpoints.exists():
        return f"interrupted; the next run resumes from the checkpoints in {checkpoints}"
    return "interrupted; the next run starts this stage again"


class Terminated(KeyboardInterrupt):
    """SIGTERM, which Slurm and other schedulers send before they kill: raised where the stage
    runs, so that it stops as Ctrl-C stops it (the resume line, the restore line)."""

    exit_code = 128 + signal.SIGTERM


def stop_on_sigterm() -> None:
    """Make SIGTERM stop this process as Ctrl-C does (raising `Terminated`)."""

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, terminate)


def exit_code(stop: KeyboardInterrupt) -> int:
    """130 after Ctrl-C, 143 after SIGTERM: 128 + the signal, as a shell reports it."""
    return getattr(stop, "exit_code", 130)


@contextlib.contextmanager
def unfinished_run_noted(
    name: str, task: str | None, seed: int | None, outputs: Path, dvc_yaml: Path = Path("dvc.yaml")
) -> Iterator[None]:
    """Under DVC: mark the run of stage `name` as under way in <outputs>/running/ until it
    ends in any way this process sees; a run that finds the mark of one killed before it
    (kill -9, out of memory) says first which outputs DVC had removed and how to restore
    them."""
    spec = _declared(name, dvc_yaml)
    if spec is None:
        yield
        return
    values = {"task": task, "seed": None if seed is None else str(seed)}
    marker = outputs / "running" / stage_address(name, spec, values)
    command = restore_command(name, task, seed, dvc_yaml)
    if marker.exists() and command:
        removed = " ".join(path for paths in removed_outputs(spec, values) for path in paths)
        print(killed_line(marker.name, removed, command), file=sys.stderr)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def killed_line(address: str, removed: str, command: str) -> str:
    return (
        f"the last run of {address} was killed before it ended, and DVC had removed {removed}; "
        f"this run makes them again (to restore them instead: {command})"
    )


@contextlib.contextmanager
def restore_on_failure(name: str, task: str | None, seed: int | None) -> Iterator[None]:
    """Under DVC: end any failure of stage `name` (an error, a crash, Ctrl-C) with the one line
    that restores the outputs DVC removed before it ran."""
    try:
        yield
    except BaseException as failure:
        if isinstance(failure, SystemExit) and failure.code in (0, None):
            raise
        close_progress_bars()
        command = restore_command(name, task, seed)
        if not isinstance(failure, SystemExit | KeyboardInterrupt):
            traceback.print_exc()
        if command:
            print(restore_line(command), file=sys.stderr)
        if isinstance(failure, KeyboardInterrupt):
            sys.exit(exit_code(failure))
        sys.exit(failure.code if isinstance(failure, SystemExit) else 1)


@contextlib.contextmanager
def resume_noted(checkpoints: Path) -> Iterator[None]:
    """Under DVC, Ctrl-C (or SIGTERM) prints one line, saying where the next run resumes (from
    `checkpoints` if they exist), instead of a traceback."""
    try:
        yield
    except KeyboardInterrupt as stop:
        close_progress_bars()
        print(interrupted_line(checkpoints), file=sys.stderr)
        sys.exit(exit_code(stop))
