"""The runner's settings (conf/scale/): executor, jobs at once, and what each stage's job asks
for. Typed like every other config group, so a wrong key or value fails before anything runs.

These settings say where stages run, not what they compute: they are composed on their own,
never into params.yaml, so changing them leaves every stage up to date.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Optional

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045

SCALE_DIR = CONF_DIR / "scale"


class ExecutorKind(StrEnum):
    local = "local"  # submitit's local executor: processes on this machine
    slurm = "slurm"  # submitit's Slurm executor: one sbatch job per stage
    ray = "ray"  # Ray tasks on a running Ray cluster (`pip install -e '.[ray]'`)


@dataclass
class Resources:
    cpus: int = 1
    gpus: int = 0
    mem_gb: float = 4.0
    timeout_min: int = 60


@dataclass
class LocalSettings:
    gpus: Optional[list[int]] = None  # GPU indices to hand out; None: those nvidia-smi lists


@dataclass
class SlurmSettings:
    partition: Optional[str] = None
    account: Optional[str] = None
    qos: Optional[str] = None
    setup: list[str] = field(default_factory=list)  # shell lines run before each job
    additional: dict[str, Any] = field(default_factory=dict)  # any other sbatch option


@dataclass
class RaySettings:
    address: Optional[str] = "auto"  # "auto": the cluster this machine belongs to


@dataclass
class ScaleConfig:
    executor: ExecutorKind = ExecutorKind.local
    jobs: int = 2
    folder: str = "runs/scale"
    use_gpus: bool = True
    local: LocalSettings = field(default_factory=LocalSettings)
    slurm: SlurmSettings = field(default_factory=SlurmSettings)
    ray: RaySettings = field(default_factory=RaySettings)
    resources: dict[str, Resources] = field(default_factory=dict)
    threads: Optional[int] = None  # CPU threads per job; None: as under `dvc repro`

    def job_environment(self) -> tuple[tuple[str, str], ...]:
        """What each job's environment gets on top of the stage's own: the thread count when
        `threads` is set, and, for several local jobs, OpenMP threads that sleep rather than
        spin while they wait (jobs sharing cores otherwise steal each other's time slices;
        the arithmetic, and so every number, is unchanged)."""
        env: dict[str, str] = {}
        if self.threads is not None:
            env |= {"OMP_NUM_THREADS": str(self.threads), "MKL_NUM_THREADS": str(self.threads)}
        if self.executor is ExecutorKind.local and self.jobs > 1:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        return tuple(env.items())

    def resources_of(self, stage: str) -> Resources:
        """A stage's resources: those of its name, a matrix stage (`finetune@sst2-42`) those
        of the name before `@`, else `default`."""
        base = stage.split("@", 1)[0]
        return self.resources.get(stage) or self.resources.get(base) or self.resources["default"]


ConfigStore.instance().store(name="scale_schema", node=ScaleConfig)


def load_config(name: str = "default", overrides: list[str] | None = None) -> ScaleConfig:
    """Compose conf/scale/<name>.yaml with Hydra overrides (`jobs=4`, `slurm.partition=gpu`)."""
    try:
        with initialize_config_dir(str(SCALE_DIR), version_base=None):
            composed = compose(config_name=name, overrides=overrides or [])
        config = OmegaConf.to_object(composed)
    except (HydraException, OmegaConfBaseException) as exc:
        causes = [exc, exc.__cause__] if exc.__cause__ else [exc]
        lines = [line.strip() for c in causes for line in str(c).splitlines()[:2] if line.strip()]
        raise PipelineError(f"conf/scale/{name}.yaml: {'; '.join(lines)}") from exc
    assert isinstance(config, ScaleConfig)
    if "default" not in config.resources:
        raise PipelineError(f"conf/scale/{name}.yaml: resources.default is missing; add it")
    if config.jobs < 1:
        raise PipelineError(f"jobs={config.jobs}: at least one stage must run at a time")
    if config.threads is not None and config.threads < 1:
        raise PipelineError(f"threads={config.threads}: give at least 1, or null for the default")
    return config
