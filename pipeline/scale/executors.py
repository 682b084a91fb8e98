"""Where jobs run: submitit (its local executor on this machine, Slurm on a cluster) or Ray.
An executor turns a stage's command and resources into a job the run loop polls; nothing
here touches DVC."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import submitit
import submitit.local.local

from pipeline.core.errors import PipelineError
from pipeline.scale.command import Command, run_command
from pipeline.scale.settings import ExecutorKind, Resources, ScaleConfig


class Job(Protocol):
    log: str  # where the job's output goes (shown when it fails)

    def done(self) -> bool: ...

    def failure(self) -> str | None:
        """None when the command succeeded, else one line saying why not."""
        ...

    def finished_well(self) -> bool:
        """Whether the job has ended with success, without waiting for anything."""
        ...

    def cancel(self) -> None:
        """Ask the job to stop: its command's processes are ended and it fails."""
        ...


class Executor(Protocol):
    def can_start(self, resources: Resources) -> bool:
        """Whether a job with these resources can start now (free GPUs)."""
        ...

    def submit(self, command: Command, resources: Resources) -> Job: ...


def _last_line(path: Path) -> str:
    if not path.exists():
        return ""
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
    return next((line for line in reversed(lines) if line), "")


class SubmititJob:
    def __init__(self, job: submitit.Job, release: list[int], pool: list[int]) -> None:
        self._job = job
        self._release, self._pool = release, pool
        self.log = str(job.paths.stderr)
        self._local = isinstance(job, submitit.local.local.LocalJob)

    def done(self) -> bool:
        finished = self._job.done()
        if finished and self._release:
            self._pool.extend(self._release)
            self._release = []
        return finished

    def failure(self) -> str | None:
        try:
            status = self._job.result()
        except Exception as exc:  # submitit raises for a job that died, timed out, was cancelled
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return f"job {self._job.job_id} ended without a result: {reason}"
        if status == 0:
            return None
        last = _last_line(Path(self.log))
        return f"exit {status}" + (f": {last}" if last else "")

    def finished_well(self) -> bool:
        return self.done() and self._job.paths.result_pickle.exists() and self.failure() is None

    def cancel(self) -> None:
        if self._local:  # the job's controller (its pid is the job id) passes SIGTERM on
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(self._job.job_id), signal.SIGTERM)
        else:
            self._job.cancel(check=False)


@contextlib.contextmanager
def _terminal_interrupts_ignored() -> Iterator[None]:
    """Processes started here ignore SIGINT (inherited): a Ctrl-C in the terminal reaches
    the orchestrator alone, which cancels each job in order."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def visible_gpus() -> list[int]:
    """The GPU indices nvidia-smi lists on this machine (none without nvidia-smi)."""
    if shutil.which("nvidia-smi") is None:
        return []
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    return [i for i, line in enumerate(listed.stdout.splitlines()) if line.startswith("GPU ")]


class SubmititExecutor:
    """submitit's AutoExecutor on `cluster` ("local" or "slurm"), one folder per stage under
    `folder` (submitit's pickles and the job's stdout/stderr). Locally, each GPU goes to one
    job at a time; a stage that asks for GPUs on a machine without any runs on the CPU."""

    def __init__(self, config: ScaleConfig, root: Path) -> None:
        self._config = config
        self._folder = root / config.folder
        self._cluster = "slurm" if config.executor is ExecutorKind.slurm else "local"
        gpus = config.local.gpus if config.local.gpus is not None else visible_gpus()
        self.free_gpus: list[int] = list(gpus) if self._cluster == "local" else []
        self.total_gpus = len(self.free_gpus)

    def _gpus(self, resources: Resources) -> int:
        if not self._config.use_gpus:
            return 0
        if self._cluster == "local":
            return min(resources.gpus, self.total_gpus)
        return resources.gpus

    def can_start(self, resources: Resources) -> bool:
        return self._cluster != "local" or self._gpus(resources) <= len(self.free_gpus)

    def submit(self, command: Command, resources: Resources) -> Job:
        gpus = self._gpus(resources)
        folder = self._folder / command.stage
        taken: list[int] = []
        executor: submitit.Executor
        if self._cluster == "local":  # cpus and memory are not enforced on one machine
            taken = self.free_gpus[:gpus]
            del self.free_gpus[:gpus]  # in place: running jobs hand GPUs back to this list
            executor = submitit.LocalExecutor(folder=folder)
            executor.update_parameters(
                timeout_min=resources.timeout_min, gpus_per_node=gpus, visible_gpus=taken
            )
        else:
            slurm = self._config.slurm
            executor = submitit.AutoExecutor(folder=folder, cluster="slurm")
            parameters = {
                "name": command.stage,
                "timeout_min": resources.timeout_min,
                "cpus_per_task": resources.cpus,
                "mem_gb": resources.mem_gb,
                "gpus_per_node": gpus,
                "slurm_partition": slurm.partition,
                "slurm_account": slurm.account,
                "slurm_qos": slurm.qos,
                "slurm_setup": list(slurm.setup),
                "slurm_additional_parameters": dict(slurm.additional),
            }
            executor.update_parameters(**{k: v for k, v in parameters.items() if v is not None})
        with _terminal_interrupts_ignored():
            job = executor.submit(run_command, command)
        return SubmititJob(job, taken, self.free_gpus)


class RayJob:
    def __init__(self, ray: Any, ref: Any) -> None:
        self._ray, self._ref = ray, ref
        self.log = "the Ray driver's output (Ray forwards each task's output to it)"

    def done(self) -> bool:
        ready, _ = self._ray.wait([self._ref], timeout=0)
        return bool(ready)

    def failure(self) -> str | None:
        try:
            status = self._ray.get(self._ref)
        except self._ray.exceptions.RayError as exc:
            return f"Ray task failed: {str(exc).strip().splitlines()[0]}"
        return None if status == 0 else f"exit {status}"

    def finished_well(self) -> bool:
        return self.done() and self.failure() is None

    def cancel(self) -> None:
        self._ray.cancel(self._ref)  # KeyboardInterrupt in the task: its command is ended


class RayExecutor:
    """Ray tasks on a running cluster, each reserving the stage's cpus, GPUs and memory;
    Ray's scheduler places them (timeouts are not enforced)."""

    def __init__(self, config: ScaleConfig) -> None:
        try:
            import ray
        except ImportError as exc:
            raise PipelineError("executor=ray needs Ray: pip install -e '.[ray]'") from exc
        self._ray, self._config = ray, config
        ray.init(address=config.ray.address, ignore_reinit_error=True)

    def can_start(self, resources: Resources) -> bool:
        return True

    def submit(self, command: Command, resources: Resources) -> Job:
        task = self._ray.remote(
            num_cpus=resources.cpus,
            num_gpus=resources.gpus if self._config.use_gpus else 0,
            memory=int(resources.mem_gb * 2**30),
            max_retries=0,
        )(run_command)
        return RayJob(self._ray, task.remote(command))


def make_executor(config: ScaleConfig, root: Path) -> Executor:
    if config.executor is ExecutorKind.ray:
        return RayExecutor(config)
    return SubmititExecutor(config, root)
