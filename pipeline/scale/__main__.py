"""`python -m pipeline.scale [--jobs N] [--executor local|slurm|ray] [--config NAME]
[--target STAGE ...] [KEY=VALUE ...]`: run the stale stages of dvc.yaml, independent ones at
once, and record each with DVC as `dvc repro` would. KEY=VALUE are overrides of
conf/scale/NAME.yaml (`slurm.partition=gpu`, `resources.finetune.mem_gb=32`).

Exit status: 0 when every stage is up to date, 1 when a stage failed (its descendants are
skipped; the rest is recorded), 2 for a setup error (one line), 130 when interrupted."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from pathlib import Path
from types import FrameType

from dvc.exceptions import DvcException
from dvc.repo import Repo, lock_repo

from pipeline.core.errors import PipelineError
from pipeline.scale.executors import SubmititExecutor, make_executor
from pipeline.scale.plan import plan
from pipeline.scale.record import SequentialOrder
from pipeline.scale.runner import Outcome, Runner, Summary
from pipeline.scale.settings import ExecutorKind, ScaleConfig, load_config


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pipeline.scale", description=__doc__)
    parser.add_argument("--jobs", type=int, help="stages running at once (default: the config)")
    parser.add_argument("--executor", choices=["local", "slurm", "ray"])
    parser.add_argument("--config", default="default", help="conf/scale/CONFIG.yaml")
    parser.add_argument(
        "--target", action="append", default=[], help="as `dvc repro TARGET` (repeatable)"
    )
    parser.add_argument("overrides", nargs="*", help="KEY=VALUE overrides of the config")
    return parser.parse_args(argv)


class Display:
    """One line per event: elapsed time, settled stages out of all, what happened."""

    def __init__(self, total: int) -> None:
        self._total, self._settled, self._start = total, 0, time.monotonic()

    def __call__(self, stage: str, what: str, detail: str) -> None:
        if what != "started":
            self._settled += 1
        minutes, seconds = divmod(round(time.monotonic() - self._start), 60)
        head = f"[{minutes:3d}:{seconds:02d} {self._settled:3d}/{self._total}] {what:<11} {stage}"
        print(f"{head}  {detail}".rstrip() if detail else head, flush=True)


def _summary_line(summary: Summary, seconds: float) -> str:
    parts = [f"{summary.count(o)} {o.value}" for o in Outcome if summary.count(o)]
    if summary.not_started:
        parts.append(f"{summary.not_started} not started")
    return f"{', '.join(parts) or 'nothing to do'} in {seconds / 60:.1f} min"


def _gpu_note(config: ScaleConfig, executor: object) -> str | None:
    local = isinstance(executor, SubmititExecutor) and config.executor is ExecutorKind.local
    wants = config.use_gpus and any(r.gpus for r in config.resources.values())
    if local and wants and executor.total_gpus == 0:
        return "no GPU visible: every stage runs on the CPU"
    return None


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    overrides = list(args.overrides)
    overrides += [f"jobs={args.jobs}"] if args.jobs is not None else []
    overrides += [f"executor={args.executor}"] if args.executor else []
    started = time.monotonic()
    logging.getLogger("dvc").setLevel(logging.WARNING)  # the display below says what happens
    try:
        config = load_config(args.config, overrides)
        repo = Repo()
        with lock_repo(repo), repo.scm_context(quiet=True) as scm:  # the only DVC user
            the_plan = plan(repo, args.target)
            executor = make_executor(config, Path(repo.root_dir))
            if note := _gpu_note(config, executor):
                print(note, flush=True)
            print(
                f"{len(the_plan.order)} stages, up to {config.jobs} at once on "
                f"{config.executor.value}; logs under {config.folder}/<stage>/",
                flush=True,
            )
            runner = Runner(the_plan, executor, config, Display(len(the_plan.order)),
                            SequentialOrder(repo, the_plan.order))  # fmt: skip

            def stop(signum: int, frame: FrameType | None) -> None:
                print(f"{signal.Signals(signum).name}: cancelling running jobs", flush=True)
                runner.stop_requested = True

            signal.signal(signal.SIGINT, stop)
            signal.signal(signal.SIGTERM, stop)
            summary = runner.run()
            to_track = sorted(scm.files_to_track)
    except (PipelineError, DvcException) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(_summary_line(summary, time.monotonic() - started))
    for stage, failure in summary.failures.items():
        print(f"error: stage {stage} failed: {failure}", file=sys.stderr)
    if to_track:
        print(f"to keep these results: git add {' '.join(to_track)}")
    if runner.stop_requested:
        return 130
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
