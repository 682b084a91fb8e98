"""The run loop. DVC decides, jobs compute: a stage whose upstream stages have all settled is
checked for staleness (as `dvc repro` checks it, after its deps were rebuilt); a stale one is
started as a job when a slot (and its GPUs) is free; a job that ends well is recorded with DVC
before any stage that depends on it is looked at. A failed stage skips its descendants; the
other branches go on. This process is the only one that touches DVC, one call at a time."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from dvc.exceptions import DvcException
from dvc.stage import Stage

from pipeline.scale import record
from pipeline.scale.command import command_of
from pipeline.scale.executors import Executor, Job
from pipeline.scale.plan import Plan, runs_as_job
from pipeline.scale.settings import ScaleConfig


class Outcome(StrEnum):
    ran = "ran"
    restored = "restored from the run cache"
    unchanged = "up to date"
    failed = "failed"
    skipped = "skipped"  # an upstream stage failed
    cancelled = "cancelled"  # the run was interrupted while it ran


SETTLED_OK = {Outcome.ran, Outcome.restored, Outcome.unchanged}

# event(stage, outcome or "started", detail): the progress display
Report = Callable[[str, str, str], None]


@dataclass
class Summary:
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # stage -> one line
    not_started: int = 0  # stages never looked at (interrupted run)

    def count(self, outcome: Outcome) -> int:
        return sum(1 for o in self.outcomes.values() if o is outcome)

    @property
    def ok(self) -> bool:
        return (
            not self.failures
            and not self.not_started
            and Outcome.cancelled not in set(self.outcomes.values())
        )


@dataclass
class Running:
    job: Job
    started: float


class Runner:
    def __init__(
        self,
        plan: Plan,
        executor: Executor,
        config: ScaleConfig,
        report: Report,
        order: record.SequentialOrder,
        poll_s: float = 0.5,
    ) -> None:
        self._plan, self._executor, self._config = plan, executor, config
        self._report, self._order, self._poll_s = report, order, poll_s
        self._state: dict[Stage, Outcome] = {}
        self._stale: list[Stage] = []  # stale, waiting for a slot
        self._running: dict[Stage, Running] = {}
        self.summary = Summary()
        self.stop_requested = False  # set by a signal handler: cancel jobs, keep what ended

    def run(self) -> Summary:
        try:
            while not self.stop_requested:
                self._settle()
                if self._launch():  # restored from the run cache: look at its dependants
                    continue
                if not self._running and not self._stale:
                    break
                if not self._collect():
                    time.sleep(self._poll_s)
        finally:  # interrupted, or an error of our own: no job outlives the run
            if self._running:
                self._cancel()
        self.summary.not_started = len(self._plan.order) - len(self._state)
        return self.summary

    # --- deciding --------------------------------------------------------------------------

    def _settle(self) -> None:
        """Look at every stage whose upstream stages have all settled, in dvc repro's order,
        until nothing more settles (an unchanged or restored stage unblocks others at once)."""
        changed = True
        while changed:
            changed = False
            for stage in self._plan.order:
                if stage in self._state or stage in self._stale or stage in self._running:
                    continue
                upstream = [self._state.get(u) for u in self._plan.upstream[stage]]
                if any(u is not None and u not in SETTLED_OK for u in upstream):
                    self._settle_as(stage, Outcome.skipped, "an upstream stage did not finish")
                    changed = True
                elif all(u is not None for u in upstream):
                    self._decide(stage)
                    changed = True

    def _decide(self, stage: Stage) -> None:
        upstream = self._plan.upstream[stage]
        if not runs_as_job(stage):
            ran = record.reproduce_in_process(stage, upstream)
            self._order.apply(stage)
            self._settle_as(stage, Outcome.ran if ran else Outcome.unchanged)
        elif not record.is_stale(stage, upstream):
            self._settle_as(stage, Outcome.unchanged)
        else:
            self._stale.append(stage)

    def _launch(self) -> bool:
        """Start stale stages while slots are free; True when one was settled at once
        (restored from the run cache)."""
        self._stale.sort(key=self._plan.priority)
        restored = False
        for stage in list(self._stale):
            if len(self._running) >= self._config.jobs:
                break
            resources = self._config.resources_of(stage.addressing)
            if not self._executor.can_start(resources):
                continue
            self._stale.remove(stage)
            if record.clear(stage):  # the run cache held this run: no job needed
                self._finish_ok(stage, Outcome.restored)
                restored = True
                continue
            command = command_of(stage, self._config.job_environment())
            job = self._executor.submit(command, resources)
            self._running[stage] = Running(job, time.monotonic())
            self._report(stage.addressing, "started", command.text)
        return restored

    # --- finishing -------------------------------------------------------------------------

    def _collect(self) -> bool:
        finished = [stage for stage, run in self._running.items() if run.job.done()]
        for stage in finished:
            run = self._running.pop(stage)
            failure = run.job.failure()
            if failure is None:
                try:
                    self._finish_ok(stage, Outcome.ran, _duration(time.monotonic() - run.started))
                    continue
                except DvcException as exc:  # e.g. the command did not write a declared out
                    failure = f"ran, but DVC cannot record it: {exc}"
            self.summary.failures[stage.addressing] = failure
            self._settle_as(stage, Outcome.failed, f"{failure} (log: {run.job.log})")
        return bool(finished)

    def _finish_ok(self, stage: Stage, outcome: Outcome, detail: str = "") -> None:
        record.record(stage)
        self._order.apply(stage)
        self._settle_as(stage, outcome, detail)

    def _settle_as(self, stage: Stage, outcome: Outcome, detail: str = "") -> None:
        self._state[stage] = outcome
        self.summary.outcomes[stage.addressing] = outcome
        self._report(stage.addressing, outcome.value, detail)

    def _cancel(self, grace_s: float = 60.0) -> None:
        """Cancel the running jobs, then record those that still ended well."""
        for run in self._running.values():
            run.job.cancel()
        deadline = time.monotonic() + grace_s
        while any(not r.job.done() for r in self._running.values()):
            if time.monotonic() > deadline:
                break
            time.sleep(self._poll_s)
        for stage, run in list(self._running.items()):
            if run.job.finished_well():
                self._finish_ok(stage, Outcome.ran)
            else:
                self._settle_as(stage, Outcome.cancelled)
        self._running.clear()


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"
