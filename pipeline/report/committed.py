"""The outputs as the checked-out commit holds them, read from git: the committed copy of
some files (for checks that compare committed docs with committed outputs, whatever a rerun
on another CPU left in the workspace), and how the workspace's outputs differ from it (what
the report says on its first screen, with the command that shows the differences).

Git's commit is no DVC dependency of any stage: what is compared is the HEAD checked out
when the comparison runs, named in what it says."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import PipelineError

log = logging.getLogger(__name__)

COMPARE = "python -m tools.compare"  # the last commit against the workspace, verdicts first


class NoCommit(PipelineError):
    """Git cannot say what the commit holds: no git, no repository, or untracked files."""


def _git(repo: Path, *args: str) -> bytes:
    """`git <args>` in `repo`, its standard output; NoCommit naming git's last error line."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
    except FileNotFoundError:
        raise NoCommit("git is not installed: the committed files cannot be read") from None
    if done.returncode != 0:
        why = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise NoCommit(f"`git {' '.join(args)}` failed: {why}")
    return done.stdout


def head(repo: Path) -> str:
    """The checked-out commit's short hash."""
    return _git(repo, "rev-parse", "--short", "HEAD").decode().strip()


def untracked(repo: Path, paths: Sequence[Path], rev: str = "HEAD") -> list[Path]:
    """Those of `paths` (files or folders, relative to `repo`) that `rev` does not hold."""
    return [p for p in paths if not _git(repo, "ls-tree", "--name-only", rev, "--", p.as_posix())]


def extract(repo: Path, paths: Sequence[Path], into: Path, rev: str = "HEAD") -> Path:
    """Write `rev`'s copy of `paths` (files or folders, relative to `repo`) under `into`, at
    the same relative paths; returns `into`. NoCommit names any path `rev` does not hold."""
    missing = untracked(repo, paths, rev)
    if missing:
        listed = ", ".join(map(str, missing))
        raise NoCommit(f"{rev} does not hold {listed}: commit it, or check it against the commit")
    archive = _git(repo, "archive", "--format=tar", rev, "--", *(p.as_posix() for p in paths))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


@dataclass(frozen=True)
class Drift:
    """How the workspace's outputs differ from commit `commit`'s: the tracked files under
    the outputs folder whose bytes differ (or that are gone), and among its metrics files
    (those `dvc metrics diff` reads) the values that differ (one added or removed counts)."""

    commit: str
    files: int
    metric_files: int
    metric_values: int

    def sentence(self) -> str:
        """What the report's first screen and its log say; empty when nothing differs."""
        if not self.files:
            return ""
        return (
            f"This run's outputs differ from commit {self.commit}'s: {_counted(self.files, 'file')}"
            f", among them {_counted(self.metric_values, 'metric value')} in "
            f"{_counted(self.metric_files, 'metrics file')} (a rerun on another CPU differs "
            f"in the last bits). `{COMPARE}` shows which verdicts and values moved."
        )


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _flat(value: object, prefix: str = "") -> dict[str, object]:
    """A metrics file's values by dotted key (nested objects flattened)."""
    if isinstance(value, dict):
        flat: dict[str, object] = {}
        for key, inner in value.items():
            flat |= _flat(inner, f"{prefix}{key}.")
        return flat
    return {prefix.removesuffix("."): value}


def differing_values(committed: bytes, current: bytes) -> int:
    """The keys of two versions of one metrics file whose values differ, or that only one
    version has."""
    old, new = (_flat(json.loads(text)) if text else {} for text in (committed, current))
    return sum(old.get(key, ...) != new.get(key, ...) for key in old.keys() | new.keys())


def drift(outputs: Path) -> Drift:
    """How the workspace's `outputs` folder differs from HEAD's, in the repository that holds
    it (NoCommit where git cannot say). Files outside git (DVC's cache, ignored files) are
    not compared."""
    repo = Path(_git(outputs, "rev-parse", "--show-toplevel").decode().strip())
    folder = outputs.resolve().relative_to(repo.resolve()).as_posix()
    listed = _git(repo, "diff", "--name-status", "--no-renames", "-z", "HEAD", "--", folder)
    fields = listed.decode().split("\0")
    status = dict(zip(fields[1::2], fields[0::2], strict=False))  # path -> M, D or A
    metrics = [f for f in status if f.startswith(f"{folder}/metrics/") and f.endswith(".json")]
    values = 0
    for name in metrics:
        committed = b"" if status[name] == "A" else _git(repo, "show", f"HEAD:{name}")
        current = b"" if status[name] == "D" else (repo / name).read_bytes()
        values += differing_values(committed, current)
    return Drift(head(repo), len(status), len(metrics), values)


def drift_notice(outputs: Path) -> str:
    """What the report's first screen says of how this run's `outputs` differ from the
    checked-out commit's, logged once: the sentence of `Drift`, empty when they are the
    commit's; where git cannot say, that they were not compared and why."""
    try:
        sentence = drift(outputs).sentence()
    except NoCommit as error:
        sentence = f"This run's outputs were not compared with a commit: {error}"
    if sentence:
        log.info("%s", sentence)
    return sentence
