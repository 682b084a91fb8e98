"""DVC's side of a stage run, called by the orchestrator alone, one stage at a time: is the
stage stale, clear its outputs (or restore them from the run cache), and record a finished
run in the cache and dvc.lock. These are the calls `dvc repro` makes around the command
(`Stage.reproduce`, `Stage.run`, `run_stage`), without the command."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dvc.dvcfile import PROJECT_FILE
from dvc.repo import Repo
from dvc.repo.reproduce import _reproduce_stage
from dvc.scm import NoSCM
from dvc.stage import Stage
from dvc.stage.cache import RunCacheNotFoundError
from dvc.utils.serialize import load_yaml, modify_yaml
from pathspec.patterns import GitWildMatchPattern


def is_stale(stage: Stage, upstream: Sequence[Stage]) -> bool:
    """What `dvc repro` asks before running a stage: its definition, deps or outs changed."""
    return stage.changed(allow_missing=False, upstream=list(upstream))


def clear(stage: Stage) -> bool:
    """Remove the stage's outputs before its command runs; True when DVC's run cache held
    this exact run and restored the outputs instead (then no job is needed)."""
    stage.remove_outs(ignore_remove=False, force=False)
    try:
        stage.repo.stage_cache.restore(stage)
    except RunCacheNotFoundError:
        stage.save_deps()
        return False
    return True


def record(stage: Stage) -> None:
    """Hash deps and outs, move cached outs into the cache, write the stage's dvc.lock entry
    (and its run-cache entry, when DVC keeps one for it)."""
    uncached = any(not out.use_cache for out in stage.outs if not (out.is_metric or out.is_plot))
    stage.save(run_cache=not uncached)
    stage.commit()
    stage.dump(update_pipeline=False)


def reproduce_in_process(stage: Stage, upstream: Sequence[Stage]) -> bool:
    """A stage that runs no command of the project (import, data source, frozen): DVC
    handles it as `dvc repro` does. True when it changed."""
    return _reproduce_stage(stage, upstream=list(upstream)) is not None


class SequentialOrder:
    """Keeps dvc.lock's entries and the outputs' .gitignore lines in the order a sequential
    `dvc repro` leaves them: what was there before the run stays where it is, what the run
    adds follows in the planner's order (the order stages would run one after the other),
    not in the order jobs ended. The order matters beyond diffs: a folder holding outputs
    of several stages is hashed whole, .gitignore included, where it is a dep (one
    .gitignore lists the attention dumps of every seed of a task). Only the project's
    dvc.lock (beside the top dvc.yaml) is ordered."""

    def __init__(self, repo: Repo, order: Sequence[Stage]) -> None:
        self._fs = repo.fs
        self._lock = repo.fs.join(repo.root_dir, "dvc.lock")
        self._top = repo.fs.join(repo.root_dir, PROJECT_FILE)
        mine = [stage for stage in order if stage.dvcfile.path == self._top]
        self._rank = {stage.name: i for i, stage in enumerate(mine)}
        lock = load_yaml(self._lock, fs=repo.fs) if repo.fs.exists(self._lock) else {}
        self._lock_before = list((lock or {}).get("stages", {}))
        # .gitignore file -> its entry for each cached output -> rank of the output
        self._entries: dict[Path, dict[str, int]] = {}
        outs = [out for stage in order for out in stage.outs if out.use_scm_ignore]
        if isinstance(repo.scm, NoSCM):  # not a git repo: no .gitignore to keep
            outs = []
        for rank, out in enumerate(outs):
            entry, gitignore = repo.scm._get_gitignore(out.fs_path)
            self._entries.setdefault(Path(gitignore), {})[GitWildMatchPattern.escape(entry)] = rank
        self._ignored_before = {path: set(_lines(path)) for path in self._entries}

    def apply(self, stage: Stage) -> None:
        """Put what recording `stage` added where a sequential run would have put it."""
        if stage.dvcfile.path == self._top:
            self._order_lock()
        for out in stage.outs:
            if out.use_scm_ignore:
                self._order_gitignore(Path(out.fs_path).parent / ".gitignore")

    def _order_lock(self) -> None:
        if not self._fs.exists(self._lock):
            return
        with modify_yaml(self._lock, fs=self._fs) as data:
            stages = data["stages"]
            new = sorted(
                (n for n in stages if n not in self._lock_before),
                key=lambda n: self._rank.get(n, len(self._rank)),
            )
            for name in [*(n for n in self._lock_before if n in stages), *new]:
                stages.move_to_end(name)

    def _order_gitignore(self, path: Path) -> None:
        ranks, before = self._entries.get(path, {}), self._ignored_before.get(path, set())
        lines = _lines(path)
        new = sorted((e for e in lines if e not in before and e in ranks), key=ranks.__getitem__)
        ordered = [e for e in lines if e not in new] + new
        if ordered != lines:
            path.write_text("".join(f"{e}\n" for e in ordered), encoding="utf-8")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
