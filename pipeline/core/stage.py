"""How a stage runs: under DVC from params.yaml, or as a Hydra app over conf/.

`python -m stages.<name> --dvc [TASK] [--seed SEED]` is what dvc.yaml calls. The config is
params.yaml, which DVC composed from conf/ (with any `dvc exp run -S` overrides); a per-task
stage gets its task spec from conf/task/TASK.yaml, a per-(task, seed) stage its fine-tuning
seed from `--seed` (an item of `seeds`); outputs go to the DVC-tracked folders.

`python -m stages.<name> [overrides] [-m]` is a Hydra app over conf/, multirun included.
Each job writes its results under its own Hydra folder and never touches the DVC-tracked
outputs. A job of the DVC run's model and profile (params.yaml's `model.name` and
`experiment_name`) reads its inputs (prepared data, fine-tuned models, attention stores) from
them; a job of another model or profile reads and writes them in
<paths.runs>/<profile>/<model>/ (`inputs_root`), and refuses in one line, naming the command
that makes it, where one is missing. Its fine-tuning seed is `seed`.

`seed` is also the seed of every data sample (so all seeds are scored on the same rows) and
the primary seed: the one whose results the claims table quotes, and the one a Hydra job
reads. Under DVC every stage downstream of fine-tuning runs per seed (`--seed`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from pipeline.core import layout
from pipeline.core.config import CONF_DIR, check_option
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.failure import (
    close_progress_bars,
    interrupted_line,
    restore_command,
    restore_line,
)
from pipeline.core.io import Captioned, write_json, write_results
from pipeline.core.layout import seed_folder
from pipeline.core.overrides import check_overrides
from pipeline.core.schema import Config, TaskConfig, load_task, seed_in_seeds

if TYPE_CHECKING:
    import pandas as pd
    import torch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StageRun:
    """One run of a stage: its config and where it reads and writes."""

    cfg: DictConfig  # typed by the schema (pipeline/core/schema.py) on construction
    out_root: Path  # outputs/ under DVC; the Hydra job folder otherwise
    under_dvc: bool
    seed_item: int | None = None  # `--seed`: the item of `seeds` a per-(task, seed) stage runs

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

    @property
    def _dvc_run_key(self) -> tuple[str, str] | None:
        """(profile, model) of the DVC run."""
        cfg = self._dvc_params
        return None if cfg is None else (str(cfg.experiment_name), str(cfg.model.name))

    @property
    def follows_dvc_run(self) -> bool:
        """Whether this run's inputs are the DVC run's: under DVC, or a Hydra job of the model
        and profile that params.yaml (the DVC run's config) names."""
        return self.under_dvc or self._dvc_run_key == (
            self.cfg.experiment_name,
            self.cfg.model.name,
        )

    def _keyed(self, path_key: str) -> bool:
        """Whether inputs under `paths.<path_key>` come from this run's own folder: a Hydra
        job of another model or profile than the DVC run's that left `paths.<path_key>` at
        the DVC run's (a folder named on the command line is read as given)."""
        if self.follows_dvc_run:
            return False
        dvc = self._dvc_params
        return dvc is None or dvc.paths[path_key] == self.cfg.paths[path_key]

    @property
    def inputs_root(self) -> Path:
        """Where this run's inputs lie: the DVC-tracked outputs when it follows the DVC run,
        else the folder of its own profile and model (`paths.runs`)."""
        if not self._keyed("outputs"):
            return Path(self.cfg.paths.outputs)
        return layout.keyed_run(self.cfg.paths.runs, self.cfg.experiment_name, self.cfg.model.name)

    @property
    def artifacts_out(self) -> Path:
        """Where this run writes what later stages read (models, attention stores): the DVC
        outputs under DVC, its job folder beside the DVC run, else `inputs_root`."""
        return self.out_root if self.follows_dvc_run else self.inputs_root

    def _input(self, path: Path, made_by: str) -> Path:
        """`path`, or a one-line refusal naming this run's config and the command that makes
        the input for it."""
        if self.follows_dvc_run or path.exists() or not path.is_relative_to(self.cfg.paths.runs):
            return path
        key = f"model={self.cfg.model.name} experiment={self.cfg.experiment_name}"
        dvc = self._dvc_run_key
        held = f"model={dvc[1]} experiment={dvc[0]}" if dvc else "no DVC run"
        raise PipelineError(
            f"no input for {key} at {path} (the DVC outputs hold {held}); make it with "
            f"`python -m stages.{made_by} task={self.cfg.task.name} {key}`"
        )

    @property
    def model_folder(self) -> Path:
        """The fine-tuned model of this run's task and seed (written by finetune)."""
        path = layout.model(self.inputs_root, self.cfg.task.name, self.seed)
        return self._input(path, "finetune")

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

    def upstream(self, *parts: str) -> Path:
        """An output of an earlier stage, read as input: the attention stores from
        `inputs_root`; any other only from the DVC run's outputs, for a run that follows it."""
        if parts[:1] == ("attention",):
            return self._input(self.inputs_root.joinpath(*parts), "dump_attention")
        self._dvc_results_only()
        return Path(self.cfg.paths.outputs).joinpath(*parts)

    def results_of(self, kind: str, stage: str, *where: str) -> Path:
        """The `plots` or `figures` folder of an earlier stage's DVC-tracked results
        (pipeline/core/layout.py), read as input by a run that follows the DVC run."""
        self._dvc_results_only()
        return layout.results(self.cfg.paths.outputs, kind, stage, *where)

    def _dvc_results_only(self) -> None:
        if not self.follows_dvc_run:
            overrides = f"-S model={self.cfg.model.name} -S experiment={self.cfg.experiment_name}"
            raise PipelineError(
                f"this stage reads other stages' results, which only the DVC run keeps, and "
                f"outputs/ holds another model or profile; run it with `dvc exp run {overrides}`"
            )

    def data(self, *parts: str) -> Path:
        """Prepared input data (written by the prepare stage); the labels by eye
        (data/annotations) are the project's own, whatever the run."""
        if not self._keyed("data") or parts[:1] == ("annotations",):
            return Path(self.cfg.paths.data).joinpath(*parts)
        keyed = layout.keyed_run(self.cfg.paths.runs, self.cfg.experiment_name, self.cfg.model.name)
        return self._input(keyed.joinpath("data", *parts), "prepare")

    @property
    def data_out(self) -> Path:
        """Where the prepare stage writes: data/ under DVC, the job folder beside the DVC run,
        else `inputs_root`/data."""
        if self.under_dvc:
            return Path(self.cfg.paths.data)
        return self.out_root / "data" if self.follows_dvc_run else self.inputs_root / "data"

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
    """`cfg` checked against the schema (pipeline/core/schema.py); a wrong type or unknown key
    fails in one line naming it."""
    try:
        return OmegaConf.merge(OmegaConf.structured(Config), cfg)
    except OmegaConfBaseException as error:
        key = getattr(error, "full_key", None) or "?"
        reason = str(error).splitlines()[0]
        raise PipelineError(f"{where}: bad value for `{key}`: {reason}") from error


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


def _timed(run: StageFn, stage: StageRun, task: str | None) -> None:
    """Run the stage; log its wall time and write it to
    timings/<stage>[/<task>[/seed<SEED>]].json.

    Timings stay out of the metrics files, so `dvc metrics diff` of two identical runs is empty.
    """
    started = time.perf_counter()
    run(stage)
    seconds = round(time.perf_counter() - started, 1)
    name = _stage_name()
    seeded = stage.seed_item is not None
    parts = [name, *([task] if task else []), *([stage.seed_folder] if seeded else [])]
    later = stage.artifacts_out  # models, prepared data, stores: what later stages read
    keyed = "" if later == stage.out_root else f"; what later stages read under {later}"
    log.info("%s took %.1f s; wrote under %s%s", "@".join(parts), seconds, stage.out_root, keyed)
    timing = {
        "stage": name,
        "task": task,
        "seconds": seconds,
        **({"seed": stage.seed} if seeded else {}),
    }
    write_json(stage.out("timings", *parts[:-1], f"{parts[-1]}.json"), timing)


@contextlib.contextmanager
def _restore_on_failure(task: str | None, seed: int | None) -> Iterator[None]:
    """Under DVC: end any failure (an error, a crash, Ctrl-C) with the one line that restores
    the outputs DVC removed before the stage ran (pipeline/core/failure.py)."""
    try:
        yield
    except BaseException as failure:
        if isinstance(failure, SystemExit) and failure.code in (0, None):
            raise
        close_progress_bars()
        command = restore_command(_stage_name(), task, seed)
        if not isinstance(failure, SystemExit | KeyboardInterrupt):
            traceback.print_exc()
        if command:
            print(restore_line(command), file=sys.stderr)
        code = failure.code if isinstance(failure, SystemExit) else 130
        sys.exit(code if isinstance(failure, SystemExit | KeyboardInterrupt) else 1)


@contextlib.contextmanager
def _interrupt_line(stage: StageRun, task: str | None) -> Iterator[None]:
    """Ctrl-C prints one line, saying where the next run resumes, instead of a traceback."""
    try:
        yield
    except KeyboardInterrupt:
        close_progress_bars()
        where = [task] if task else []
        checkpoints = stage.out("checkpoints", _stage_name(), *where, stage.seed_folder)
        print(interrupted_line(checkpoints), file=sys.stderr)
        sys.exit(130)


def stage_main(run: StageFn) -> None:
    """Entry point of every stage module (see the module docstring for the two modes)."""
    args = sys.argv[1:]
    if args[:1] == ["--dvc"]:
        logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s] %(message)s")
        task, seed = _dvc_args(args)
        with _restore_on_failure(task, seed), exit_on_error():
            cfg = _load_dvc_config(task)
            check_seeds(cfg, seed)
            stage = StageRun(cfg, out_root=Path(cfg.paths.outputs), under_dvc=True, seed_item=seed)
            with _interrupt_line(stage, task):
                _timed(run, stage, task)
        return

    with exit_on_error():
        check_overrides(args)

    import hydra
    from hydra.core.hydra_config import HydraConfig

    @hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
    def hydra_job(cfg: DictConfig) -> None:
        out_root = Path(HydraConfig.get().runtime.output_dir)
        with exit_on_error():
            stage = StageRun(cfg=cfg, out_root=out_root, under_dvc=False)
            with _interrupt_line(stage, stage.task.name):
                _timed(run, stage, None)

    hydra_job()
