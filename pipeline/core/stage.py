"""How a stage runs: under DVC from params.yaml, or as a Hydra app over conf/.

`python -m stages.<name> --dvc [TASK] [--seed SEED]` is what dvc.yaml calls. The config is
params.yaml, which DVC composed from conf/ (with any `dvc exp run -S` overrides); a per-task
stage gets its task spec from conf/task/TASK.yaml, a per-(task, seed) stage its fine-tuning
seed from `--seed` (an item of `seeds`); outputs go to the DVC-tracked folders.

`python -m stages.<name> [overrides] [-m]` is a Hydra app over conf/, multirun included.
Each job writes its results under its own Hydra folder and never touches the DVC-tracked
outputs. The inputs it reads (prepared data, fine-tuned models, attention stores) are those
made under every setting they depend on (pipeline/core/job_inputs.py finds them by the keys
of pipeline/core/input_keys.py): the DVC run's when each such setting equals params.yaml's,
else the ones a Hydra job of the making stage wrote under the same settings in
<paths.runs>/<profile>/<model>/<stage>[-<task>]-<digest>/; where one is missing the job
refuses in one line naming the command that makes it. Its fine-tuning seed is `seed`.

`seed` is also the seed of every data sample (so all seeds are scored on the same rows) and
the primary seed: the one whose results the claims table quotes, and the one a Hydra job
reads. Under DVC every stage downstream of fine-tuning runs per seed (`--seed`).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf

from pipeline.core import layout, locks, stage_schema
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import exit_on_error
from pipeline.core.failure import (
    restore_on_failure,
    resume_noted,
    stop_on_sigterm,
    unfinished_run_noted,
)
from pipeline.core.io import Captioned, write_json, write_results
from pipeline.core.job_folder import JobFolder, new_run_id
from pipeline.core.job_inputs import JobInputs
from pipeline.core.layout import seed_folder
from pipeline.core.overrides import check_overrides
from pipeline.core.run_config import check_seeds, load_dvc_config, typed
from pipeline.core.schema import TaskConfig, load_task

if TYPE_CHECKING:
    import pandas as pd
    import torch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StageRun:
    """One run of a stage: its config and where it reads and writes."""

    cfg: DictConfig  # typed by the schema in use (pipeline/core/stage_schema.py) on construction
    out_root: Path  # outputs/ under DVC; the Hydra job folder otherwise
    under_dvc: bool
    seed_item: int | None = None  # `--seed`: the item of `seeds` a per-(task, seed) stage runs
    overrides: tuple[str, ...] = ()  # a Hydra job's command line, repeated by its refusals

    def __post_init__(self) -> None:
        object.__setattr__(self, "cfg", typed(self.cfg, "config"))

    def settings(self, group: str) -> Any:
        """Config group `group` as its schema dataclass (e.g. `AblateConfig`): what a package
        receives."""
        return OmegaConf.to_object(self.cfg[group])

    @property
    def task(self) -> TaskConfig:
        """The task of a per-task stage."""
        return self.settings("task")

    @property
    def tasks(self) -> list[TaskConfig]:
        """The tasks of a multi-task stage (see `task_names`)."""
        return [load_task(name) for name in self.task_names]

    @property
    def device(self) -> torch.device:
        """The device every model of the run computes on (`device`)."""
        from pipeline.core.precision import pick_device

        return pick_device(self.cfg.device)

    @cached_property
    def inputs(self) -> JobInputs:
        """Where this run reads earlier stages' outputs and writes later stages' inputs."""
        return JobInputs(self.cfg, self.out_root, self.under_dvc, self.seed_item, self.overrides)

    @property
    def keyed_writes(self) -> list[Path]:
        """The keyed folders this run wrote later stages' inputs into."""
        return self.inputs.keyed_writes

    def hold_made(self, producer: str) -> None:
        """A Hydra job of `producer` holds the keyed folder of what it makes for its whole run
        (`JobInputs.hold`)."""
        self.inputs.hold(producer)

    def inputs_out(self, producer: str) -> Path:
        """Where this run, of stage `producer`, writes what later stages read
        (`JobInputs.written_to`)."""
        return self.inputs.written_to(producer)

    @property
    def model_folder(self) -> Path:
        """The fine-tuned model of this run's task and seed (written by finetune)."""
        return self.upstream("models", self.cfg.task.name, self.seed_folder)

    @property
    def seed(self) -> int:
        """The fine-tuning seed: `--seed` under DVC, else `seed` (the primary seed)."""
        return self.inputs.seed

    @property
    def seed_folder(self) -> str:
        """The folder of this run's fine-tuned model and its results (`seed42`)."""
        return seed_folder(self.seed)

    def out(self, *parts: str) -> Path:
        """A path this run writes."""
        return self.out_root.joinpath(*parts)

    def upstream(self, *parts: str, reader: str | None = None) -> Path:
        """An earlier stage's output, read by stage `reader` (`JobInputs.upstream`)."""
        return self.inputs.upstream(*parts, reader=reader)

    def results_of(self, kind: str, stage: str, *where: str) -> Path:
        """A `plots` or `figures` folder of an earlier stage (`JobInputs.results_of`)."""
        return self.inputs.results_of(kind, stage, *where)

    def data(self, *parts: str) -> Path:
        """Prepared input data (no `parts`: the GLUE splits; `JobInputs.data`)."""
        return self.inputs.data(*parts)

    @property
    def task_names(self) -> list[str]:
        """The tasks a multi-task stage covers: `tasks` under DVC, the job's task otherwise."""
        return list(self.cfg.tasks) if self.under_dvc else [self.cfg.task.name]

    def write_outputs(
        self,
        stage: str,
        *where: str,
        tables: Mapping[str, pd.DataFrame] | None = None,
        figures: Mapping[str, Captioned] | None = None,
        metrics: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        texts: Mapping[str, str] | None = None,
    ) -> None:
        """Write a stage's results by file stem where pipeline/core/layout.py puts them:
        `tables` to plots/<stage>/<where>/<stem>.csv, `figures` to
        figures/<stage>/<where>/<stem>.png (with their caption; each figure's config over
        `config`), `metrics` to the stage's metrics file, `texts` by file name beside the
        tables (`where`: the task and seed folder, as far as the stage runs per them)."""
        write_results(
            layout.results(self.out_root, "plots", stage, *where),
            layout.results(self.out_root, "figures", stage, *where),
            layout.metrics(self.out_root, stage, *where),
            tables=tables,
            figures=figures,
            metrics=metrics,
            texts=texts,
            config=config,
        )


StageFn = Callable[[StageRun], None]


def _stage_name() -> str:
    """`ablate` for `python -m stages.ablate`."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    return spec.name.rpartition(".")[2] if spec else Path(sys.argv[0]).stem


def _dvc_args(args: list[str]) -> tuple[str | None, int | None]:
    """`--dvc [TASK] [--seed SEED]` -> (TASK, SEED)."""
    parser = argparse.ArgumentParser(prog=f"python -m stages.{_stage_name()}")
    parser.add_argument("--dvc", action="store_true", required=True)
    parser.add_argument("task", nargs="?")
    parser.add_argument("--seed", type=int)
    parsed = parser.parse_args(args)
    return parsed.task, parsed.seed


def _item(stage: StageRun, task: str | None) -> list[str]:
    """The DVC matrix item's folders of a run: [task][/seed<SEED>], as far as the stage runs
    per them (an unseeded stage reads no seed)."""
    return [
        *([task] if task else []),
        *([stage.seed_folder] if stage.seed_item is not None else []),
    ]


def _timed(run: StageFn, stage: StageRun, name: str, task: str | None) -> None:
    """Run stage `name`; log its wall time and write it to
    timings/<stage>[/<task>[/seed<SEED>]].json.

    Timings stay out of the metrics files, so `dvc metrics diff` of two identical runs is empty.
    """
    started = time.perf_counter()
    run(stage)
    seconds = round(time.perf_counter() - started, 1)
    parts = [name, *_item(stage, task)]
    keyed = "".join(f"; what later stages read under {k}" for k in stage.keyed_writes)
    log.info("%s took %.1f s; wrote under %s%s", "@".join(parts), seconds, stage.out_root, keyed)
    timing = {
        "stage": name,
        "task": task,
        "seconds": seconds,
        **({"seed": stage.seed} if stage.seed_item is not None else {}),
    }
    write_json(stage.out("timings", *parts[:-1], f"{parts[-1]}.json"), timing)


def stage_main(run: StageFn) -> None:
    """Entry point of every stage module (see the module docstring for the two modes)."""
    name = _stage_name()  # here: a launcher's worker process has a __main__ of its own
    with stage_schema.using(stage_schema.for_stage(name)):  # its groups and its upstream's
        _stage_main(run, name)


def _stage_main(run: StageFn, name: str) -> None:
    args = sys.argv[1:]
    stop_on_sigterm()
    if args[:1] == ["--dvc"]:
        logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s] %(message)s")
        task, seed = _dvc_args(args)
        with restore_on_failure(name, task, seed), exit_on_error():
            cfg = load_dvc_config(task)
            check_seeds(cfg, seed)
            stage = StageRun(cfg, out_root=Path(cfg.paths.outputs), under_dvc=True, seed_item=seed)
            checkpoints = stage.out("checkpoints", name, *_item(stage, task))
            with unfinished_run_noted(name, task, seed, stage.out_root), resume_noted(checkpoints):
                _timed(run, stage, name, task)
        return

    with exit_on_error():
        check_overrides(args)

    import hydra
    from hydra.core.hydra_config import HydraConfig

    @hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
    def hydra_job(cfg: DictConfig) -> None:
        hydra_cfg = HydraConfig.get()
        out_root = Path(hydra_cfg.runtime.output_dir)
        job = JobFolder.at_start(out_root, out_root / f"{hydra_cfg.job.name}.log")
        overrides = tuple(hydra_cfg.overrides.task)
        with exit_on_error(), job.ends(name, overrides), locks.for_the_job():
            stage = StageRun(cfg=cfg, out_root=out_root, under_dvc=False, overrides=overrides)
            stage.hold_made(name)
            _timed(run, stage, name, None)

    if not any(arg.startswith("hydra.job.name=") for arg in args):  # the job folder's name
        sys.argv.append(f"hydra.job.name={name}")
    new_run_id()
    hydra_job()
