"""Where a stage run reads what earlier stages made, and where it writes what later stages
read.

Under DVC every input is the DVC run's (`paths.data`, `paths.outputs`). A Hydra job reads
the inputs made under every setting they depend on (pipeline/core/input_keys.py): the DVC
run's when each such setting equals params.yaml's, else the ones a Hydra job of the stage
that makes them wrote in their keyed folder; where one is missing it refuses in one line
naming the command that makes it. Other stages' results (tables, figures, metrics) only the
DVC run keeps: a job reads them only when every setting they depend on is the DVC run's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from pipeline.core import input_keys, layout, locks
from pipeline.core.errors import PipelineError
from pipeline.core.run_config import load_dvc_config

log = logging.getLogger(__name__)

GLUE = "glue"  # the folder of paths.data that holds the prepared GLUE splits


@dataclass(frozen=True)
class JobInputs:
    """The inputs of one stage run (pipeline/core/stage.py's `StageRun.inputs`)."""

    cfg: DictConfig  # the run's typed config
    out_root: Path  # outputs/ under DVC; the Hydra job folder otherwise
    under_dvc: bool
    seed_item: int | None  # `--seed` under DVC; None: the primary `seed`, read when needed
    overrides: tuple[str, ...] = ()  # a Hydra job's command line, repeated by its refusals
    keyed_writes: list[Path] = field(default_factory=list, compare=False)  # keyed folders made

    @property
    def seed(self) -> int:
        """The fine-tuning seed of the run (an unseeded stage never reads it)."""
        return self.cfg.seed if self.seed_item is None else self.seed_item

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
        return None if self._dvc_params is None else load_dvc_config(self.cfg.task.name)

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

    def made_for(self, producer: str) -> Path:
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

    def hold(self, producer: str) -> None:
        """A Hydra job of stage `producer` that makes later stages' inputs in their keyed
        folder holds that folder for its whole run (pipeline/core/locks.py): a job under the
        same settings waits for it, never making them beside it."""
        made = input_keys.made(producer)
        if made and not self.under_dvc and self._keyed(producer):
            folder = input_keys.folder(self.cfg, producer)
            locks.hold(folder, exclusive=True, what=made.what)

    def written_to(self, producer: str) -> Path:
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

    def upstream(self, *parts: str, reader: str | None = None) -> Path:
        """An output of an earlier stage, read as input: a stage's input of later stages
        (models, attention stores) from where it was made for this run; any other (read by
        stage `reader`) only from the DVC run's outputs, for a run that follows it in every
        setting they depend on."""
        producer = input_keys.producer_of("outputs", parts[0]) if parts else None
        if producer is not None:
            return self.made_for(producer).joinpath(*parts)
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
        return self.made_for(producer).joinpath(*parts)


def _made_by(producer: str) -> input_keys.Made:
    """What stage `producer` makes for later stages, as its declaration says."""
    made = input_keys.made(producer)
    if made is None:
        raise PipelineError(
            f"stage {producer} makes no input of later stages; declare what it `makes` in "
            f"pipeline/analyses/{producer}/declaration.py"
        )
    return made
