"""How a stage runs: under DVC from params.yaml, or as a Hydra app over conf/.

`python -m stages.<name> --dvc [TASK] [--seed SEED]` is what dvc.yaml calls. The config is
params.yaml, which DVC composed from conf/ (with any `dvc exp run -S` overrides); a per-task
stage gets its task spec from conf/task/TASK.yaml, a per-(task, seed) stage its fine-tuning
seed from `--seed` (an item of `seeds`); outputs go to the DVC-tracked folders.

`python -m stages.<name> [overrides] [-m]` is a Hydra app over conf/, multirun included.
Each job writes its results under its own Hydra folder and never touches the DVC-tracked
outputs. The inputs it reads (prepared data, fine-tuned models, attention stores) are those
made under every setting they depend on (pipeline/core/input_keys.py): the DVC run's when
each such setting equals params.yaml's, else the ones a Hydra job of the making stage wrote
under the same settings in <paths.runs>/<profile>/<model>/<stage>[-<task>]-<digest>/; where
one is missing the job refuses in one line naming the command that makes it. Its
fine-tuning seed is `seed`.

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
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from pipeline.core import input_keys, layout, locks, stage_schema
from pipeline.core.bounds import check_bounds
from pipeline.core.config import CONF_DIR, check_option
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.failure import (
    restore_on_failure,
    resume_noted,
    stop_on_sigterm,
    unfinished_run_noted,
)
from pipeline.core.io import Captioned, write_json, write_results
from pipeline.core.job_folder import JobFolder, new_run_id
from pipeline.core.layout import seed_folder
from pipeline.core.overrides import check_overrides
from pipeline.core.schema import TaskConfig, load_task, seed_in_seeds

if TYPE_CHECKING:
    import pandas as pd
    import torch

log = logging.getLogger(__name__)

GLUE = "glue"  # the folder of paths.data that holds the prepared GLUE splits


@dataclass(frozen=True)
class StageRun:
    """One run of a stage: its config and where it reads and writes."""

    cfg: DictConfig  # typed by the schema in use (pipeline/core/stage_schema.py) on construction
    out_root: Path  # outputs/ under DVC; the Hydra job folder otherwise
    under_dvc: bool
    seed_item: int | None = None  # `--seed`: the item of `seeds` a per-(task, seed) stage runs
    overrides: tuple[str, ...] = ()  # a Hydra job's command line, repeated by its refusals
    keyed_writes: list[Path] = field(default_factory=list, compare=False)  # keyed folders made

    def __post_init__(self) -> None:
        object.__setattr__(self, "cfg", _typed(self.cfg, "config"))

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
    def _dvc_params(self) -> DictConfig | None:
        """params.yaml in the working folder (the DVC run's config), read once per run; None
        without one."""
        params = Path("params.yaml")
        return OmegaConf.load(params) if params.exists() else None

    @cached_property
    def _dvc_config(self) -> DictConfig | None:
        """The DVC run's config for this job's task (as `--dvc TASK` reads it); None without
        params.yaml."""
        return None if self._dvc_params is None else _load_dvc_config(self.cfg.task.name)

    @property
    def follows_dvc_run(self) -> bool:
        """Whether this run reads other stages' results from the DVC run's outputs: under DVC,
        or a Hydra job of the model and profile that params.yaml (the DVC run's config)
        names."""
        dvc = self._dvc_params
        return self.under_dvc or (
            dvc is not None
            and (str(dvc.experiment_name), str(dvc.model.name))
            == (self.cfg.experiment_name, self.cfg.model.name)
        )

    def _follows_dvc(self, producer: str) -> bool:
        """Whether the inputs `producer` makes for this run are the DVC run's: under DVC, or
        a Hydra job whose every setting they depend on (pipeline/core/input_keys.py) equals
        params.yaml's, of a task the DVC run covers."""
        if self.under_dvc:
            return True
        dvc = self._dvc_config
        if dvc is None or (input_keys.per_task(producer) and self.cfg.task.name not in dvc.tasks):
            return False
        return not input_keys.differing(self.cfg, dvc, producer)

    def _given(self, path_key: str) -> bool:
        """Whether `paths.<path_key>` was named on the command line (read as given)."""
        dvc = self._dvc_params
        return dvc is not None and dvc.paths[path_key] != self.cfg.paths[path_key]

    def _root(self, producer: str) -> Path:
        """The folder that holds the inputs `producer` makes for this run, laid out as
        `paths.outputs` (or `paths.data`, for prepared data) holds the DVC run's: that folder
        when the run follows the DVC run or names it on the command line, else the folder
        keyed by the settings that make them (`input_keys.folder`)."""
        path_key = _made_by(producer).under
        if not self._keyed(producer):
            return Path(self.cfg.paths[path_key])
        keyed = input_keys.folder(self.cfg, producer)
        return keyed / "data" if path_key == "data" else keyed

    def _made(self, producer: str) -> Path:
        """The input `producer` makes for this run (its task's data, model or store)."""
        return _made_by(producer).of(self._root(producer), self.cfg.task.name, self.seed)

    def _keyed(self, producer: str) -> bool:
        """Whether the inputs `producer` makes for this run lie in their keyed folder."""
        return not (self._follows_dvc(producer) or self._given(_made_by(producer).under))

    def _input(self, producer: str) -> Path:
        """The folder that holds the input `producer` makes for this run, or a one-line
        refusal naming the settings and the command that makes it."""
        root, made, what = self._root(producer), self._made(producer), _made_by(producer).what
        if not self._keyed(producer):
            return root
        keyed = input_keys.folder(self.cfg, producer)
        if keyed.exists():  # a live job that makes it is waited for
            locks.hold(keyed, exclusive=False, what=what)
        if made.exists():
            log.info("reads the %s made under its settings in %s", what, root)
            return root
        dvc = self._dvc_config
        if dvc is None:
            why = "no params.yaml"
        elif input_keys.per_task(producer) and self.cfg.task.name not in dvc.tasks:
            why = f"the DVC run covers {', '.join(dvc.tasks)}"
        else:
            keys = input_keys.differing(self.cfg, dvc, producer)
            more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
            why = f"its settings differ from params.yaml's in {', '.join(keys[:3])}{more}"
        raise PipelineError(
            f"no {what} made under this job's settings ({why}) at {made}; "
            f"make it with `{self._making(producer)}`"
        )

    def _making(self, producer: str) -> str:
        """The command that makes the input `producer` makes for this run, after the inputs
        upstream of it that are missing too."""
        steps = [
            name
            for name in input_keys.chain(producer)[:-1]
            if input_keys.made(name) and not self._made(name).exists()
        ]
        return " && ".join(self._command(name) for name in [*steps, producer])

    def _command(self, producer: str) -> str:
        """The command that runs `producer` under this job's settings: a Hydra job with the
        job's overrides, or the DVC stage when its inputs are the DVC run's."""
        if not self._keyed(producer):
            matrix = input_keys.per_matrix_task(producer)
            return f"dvc repro {producer}" + (f"@{self.cfg.task.name}-{self.seed}" * matrix)
        given = self._given_overrides(("hydra.", "hydra/"))
        task = [] if any(a.startswith("task=") for a in given) else [f"task={self.cfg.task.name}"]
        return " ".join([f"python -m stages.{producer}", *task, *given])

    def _given_overrides(self, left_out: tuple[str, ...]) -> list[str]:
        """The job's command line less the arguments that start with `left_out`; for a run
        built in code, the groups that name it."""
        given = [arg for arg in self.overrides if not arg.startswith(left_out)]
        return given or [f"model={self.cfg.model.name}", f"experiment={self.cfg.experiment_name}"]

    def hold_made(self, producer: str) -> None:
        """A Hydra job of stage `producer` that makes later stages' inputs in their keyed
        folder holds that folder for its whole run (pipeline/core/locks.py): a job under the
        same settings waits for it, never making them beside it."""
        made = input_keys.made(producer)
        if made and not self.under_dvc and self._keyed(producer):
            folder = input_keys.folder(self.cfg, producer)
            locks.hold(folder, exclusive=True, what=made.what)

    def inputs_out(self, producer: str) -> Path:
        """Where this run, of stage `producer`, writes what later stages read (prepared data
        and data digests laid out as data/ is; models and attention stores as outputs/ is):
        under DVC, `paths.data` or the outputs folder; a Hydra job whose settings are the DVC
        run's, its job folder; a folder named on the command line, as given; else their
        keyed folder, with the settings written beside them."""
        made = input_keys.made(producer)
        data = made is None or made.under == "data"
        if self.under_dvc:
            return Path(self.cfg.paths.data) if data else self.out_root
        if made is None:  # data digests: read by DVC alone
            return self.out_root / "data"
        if self._given(made.under):
            return self._root(producer)
        if self._follows_dvc(producer):
            return self.out_root / "data" if data else self.out_root
        keyed = input_keys.write_manifest(self.cfg, producer)
        self.keyed_writes.append(keyed)
        return keyed / "data" if data else keyed

    @property
    def model_folder(self) -> Path:
        """The fine-tuned model of this run's task and seed (written by finetune)."""
        return self.upstream("models", self.cfg.task.name, self.seed_folder)

    @property
    def seed(self) -> int:
        """The fine-tuning seed: `--seed` under DVC, else `seed` (the primary seed)."""
        return self.cfg.seed if self.seed_item is None else self.seed_item

    @property
    def seed_folder(self) -> str:
        """The folder of this run's fine-tuned model and its results (`seed42`)."""
        return seed_folder(self.seed)

    def out(self, *parts: str) -> Path:
        """A path this run writes."""
        return self.out_root.joinpath(*parts)

    def upstream(self, *parts: str, reader: str | None = None) -> Path:
        """An output of an earlier stage, read as input: a stage's input of later stages
        (models, attention stores) from where it was made for this run; any other (read by
        stage `reader`) only from the DVC run's outputs, for a run that follows it in every
        setting they depend on."""
        producer = input_keys.producer_of("outputs", parts[0]) if parts else None
        if producer is not None:
            return self._input(producer).joinpath(*parts)
        self._dvc_results_only(input_keys.chain(reader, results=True)[:-1] if reader else ())
        return Path(self.cfg.paths.outputs).joinpath(*parts)

    def results_of(self, kind: str, stage: str, *where: str) -> Path:
        """The `plots` or `figures` folder of an earlier stage's DVC-tracked results
        (pipeline/core/layout.py), read as input by a run that follows the DVC run in every
        setting they depend on."""
        self._dvc_results_only(input_keys.chain(stage, results=True))
        return layout.results(self.cfg.paths.outputs, kind, stage, *where)

    def _dvc_results_only(self, writers: tuple[str, ...]) -> None:
        """Refuse in one line, naming the DVC experiment that makes them, unless the results
        of stages `writers` in the DVC run's outputs were made under this run's settings."""
        if self.under_dvc:
            return
        dvc = self._dvc_config
        keys = [] if dvc is None else input_keys.differing_of(self.cfg, dvc, writers)
        if self.follows_dvc_run and dvc is not None and not keys:
            return
        given = self._given_overrides(("hydra.", "hydra/", "task="))
        differ = f" (its settings differ in {', '.join(keys[:3])})" if keys else ""
        raise PipelineError(
            f"this stage reads other stages' results, which only the DVC run keeps, and "
            f"outputs/ holds them made under other settings{differ}; run it with "
            f"`dvc exp run {' '.join(f'-S {a}' for a in given)}`"
        )

    def data(self, *parts: str) -> Path:
        """Prepared input data (no `parts`: the GLUE splits; parts `framenet`, ... the
        FrameNet sentences), from where the stage that makes it made it for this run; the
        labels by eye (data/annotations) are the project's own, whatever the run."""
        if parts[:1] == ("annotations",):
            return Path(self.cfg.paths.data).joinpath(*parts)
        folder = parts[0] if parts else GLUE
        producer = input_keys.producer_of("data", folder)
        if producer is None:
            raise PipelineError(f"no stage makes data/{folder}; declare the one that `makes` it")
        return self._input(producer).joinpath(*parts)

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


def _made_by(producer: str) -> input_keys.Made:
    """What stage `producer` makes for later stages, as its declaration says."""
    made = input_keys.made(producer)
    if made is None:
        raise PipelineError(
            f"stage {producer} makes no input of later stages; declare what it `makes` in "
            f"pipeline/analyses/{producer}/declaration.py"
        )
    return made


def primary_model(repo: Path, task: str) -> Path:
    """The fine-tuned model of `task` for the primary seed of `repo`'s composed config
    (<outputs>/models/<task>/seed<seed>), for scripts outside DVC."""
    cfg = OmegaConf.load(repo / "params.yaml")
    return layout.model(repo / cfg.paths.outputs, task, int(cfg.seed))


def check_seeds(cfg: DictConfig, seed_item: int | None = None) -> None:
    """Fail in one line unless `seeds` holds the primary `seed` (and `--seed`, when given)."""
    seeds = list(cfg.seeds)
    seed_in_seeds(cfg.seed, seeds)
    if seed_item is not None and seed_item not in seeds:
        raise PipelineError(f"--seed {seed_item} is not in `seeds` {seeds}; add it to `seeds`")


def _typed(cfg: DictConfig, where: str) -> DictConfig:
    """`cfg` checked against the schema in use (pipeline/core/stage_schema.py); a wrong type,
    an unknown key or a value out of its bound (pipeline/core/bounds.py) fails in one line
    naming it."""
    schema = stage_schema.registered()
    try:
        typed = OmegaConf.merge(OmegaConf.structured(schema), cfg)
    except OmegaConfBaseException as error:
        key = getattr(error, "full_key", None) or "?"
        reason = str(error).splitlines()[0]
        raise PipelineError(f"{where}: bad value for `{key}`: {reason}") from error
    check_bounds(typed, schema)
    return typed


def _load_dvc_config(task: str | None) -> DictConfig:
    params = Path("params.yaml")
    if not params.exists():
        raise PipelineError(
            "params.yaml not found in the working folder; run from the repo root "
            "(dvc repro does) or compose it with `dvc exp run`"
        )
    cfg = OmegaConf.load(params)
    if task is not None:
        check_option("task", task)
        with open_dict(cfg):
            cfg.task = OmegaConf.load(CONF_DIR / "task" / f"{task}.yaml")
    return _typed(cfg, f"params.yaml (task {task})" if task else "params.yaml")


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


def _timed(run: StageFn, stage: StageRun, name: str, task: str | None) -> None:
    """Run stage `name`; log its wall time and write it to
    timings/<stage>[/<task>[/seed<SEED>]].json.

    Timings stay out of the metrics files, so `dvc metrics diff` of two identical runs is empty.
    """
    started = time.perf_counter()
    run(stage)
    seconds = round(time.perf_counter() - started, 1)
    seeded = stage.seed_item is not None
    parts = [name, *([task] if task else []), *([stage.seed_folder] if seeded else [])]
    keyed = "".join(f"; what later stages read under {k}" for k in stage.keyed_writes)
    log.info("%s took %.1f s; wrote under %s%s", "@".join(parts), seconds, stage.out_root, keyed)
    timing = {
        "stage": name,
        "task": task,
        "seconds": seconds,
        **({"seed": stage.seed} if seeded else {}),
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
            cfg = _load_dvc_config(task)
            check_seeds(cfg, seed)
            stage = StageRun(cfg, out_root=Path(cfg.paths.outputs), under_dvc=True, seed_item=seed)
            where = [task] if task else []
            checkpoints = stage.out("checkpoints", name, *where, stage.seed_folder)
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
        with exit_on_error(), job.ends(name, overrides):
            stage = StageRun(cfg=cfg, out_root=out_root, under_dvc=False, overrides=overrides)
            stage.hold_made(name)
            _timed(run, stage, name, None)

    if not any(arg.startswith("hydra.job.name=") for arg in args):  # the job folder's name
        sys.argv.append(f"hydra.job.name={name}")
    new_run_id()
    hydra_job()
