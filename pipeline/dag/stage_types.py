"""What a DVC stage is declared as: what it runs per, the config keys it reads, its inputs and
its outputs (`Stage`), and the parts declarations share. Each analysis package declares its
stage with these (pipeline/analyses/<name>/declaration.py); pipeline/dag/declarations.py
collects them. A stage's results lie where pipeline/core/layout.py puts them, for the stage
that writes them and the ones that read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from pipeline.core import layout

OUTPUTS = "outputs"  # `paths.outputs`: where DVC tracks the stages' outputs
DATA = "data"  # `paths.data`: prepared inputs
TASK = "${item.task}"  # the task and fine-tuning seed of one run of a matrix stage
SEED = "${item.seed}"


class Per(Enum):
    """What one run of a stage covers."""

    RUN = ()  # the whole configuration, once
    SEED = ("seed",)  # one fine-tuning seed of `seeds`, every task of `tasks`
    TASK_SEED = ("task", "seed")  # one task of `tasks` and one fine-tuning seed of `seeds`

    @property
    def where(self) -> tuple[str, ...]:
        """The folders of one run under its stage's results (pipeline/core/layout.py)."""
        parts = {"task": TASK, "seed": layout.seed_folder(SEED)}
        return tuple(parts[name] for name in self.value)


@dataclass(frozen=True)
class Upstream:
    """An input that is another stage's output: its `plots`, `figures` or `metrics` (one
    `file` of its plots folder, or all of them), its fine-tuned `models`, its `attention`
    stores or the pattern `classifier`. A stage that covers more than one run of the writer
    depends on the folder above those runs."""

    stage: str
    kind: str
    file: str | None = None


@dataclass(frozen=True)
class DvcPlot:
    """A table of the stage's plots folder that a DVC template draws, with its axes. A stage
    run once (or per seed) has it in dvc.yaml's `plots:` (for the primary seed); dvc.yaml
    cannot list a per-task table for every task of `tasks`, so `python -m tools.compare
    --plot <table>` gives those axes to `dvc plots diff`."""

    table: str
    template: str
    x: str
    y: str


@dataclass(frozen=True)
class Stage:
    name: str  # runs `python -m stages.<name> --dvc`
    per: Per
    params: tuple[str, ...]  # the keys of params.yaml it reads (a group: all of it)
    results: tuple[str, ...] = ("plots", "figures", "metrics")  # written by write_outputs
    outs: tuple[str, ...] = ()  # other outputs, in the DVC cache
    kept_outs: tuple[str, ...] = ()  # other outputs, kept in git (outside the DVC cache)
    inputs: tuple[str | Upstream, ...] = ()  # data and other stages' outputs it reads
    task_configs: bool = False  # reads conf/task/*.yaml of every task in `tasks`
    whole_config: bool = False  # reads every key of params.yaml (its params: the whole file)
    always_changed: bool = False  # runs on every `dvc repro` (it reads what DVC cannot track)
    # its `outs` are each written whole under a temporary name and renamed (core.io.atomic_path),
    # so DVC may keep them while the command runs (`persist`): a failed or interrupted run
    # leaves the last good ones in place (a folder written file by file cannot be kept: a
    # run writing fewer files would leave old ones in it)
    kept_while_running: bool = False
    note: str = ""  # a comment above the stage in dvc.yaml
    # what its first `outs` is, in words ("fine-tuned model"), for a stage whose cached outputs
    # later stages read: a Hydra job keys them by its settings (pipeline/dag/stage_inputs.py)
    makes: str = ""
    dvc_plots: tuple[DvcPlot, ...] = field(default=())
    # the figures (PNG names) a stage run once or per seed writes on every run: dvc.yaml's
    # `plots:` lists each (its caption sidecars are no plots); a per-task figure, like a
    # per-task table, is drawn by `python -m tools.compare --plot <png>`
    dvc_figures: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return f"stages.{self.name}"


# What a stage that loads a model and encodes a task's rows reads besides its own group.
MODEL = ("model", "shared", "device")
STORE = (Upstream("dump_attention", "attention"),)  # the attention store of its task and seed


def data_digest(name: str) -> str:
    """The digest of offline data set `name` that its reader depends on (data_sources)."""
    return str(layout.data_digest(DATA, name))


# The model's name, location and files' digest (model_identity), a dep of every stage that
# reads the `model` group, so new weights under the same model.name_or_path rerun them.
MODEL_IDENTITY = str(layout.model_identity(OUTPUTS))


READERS_GROUPS = ("clark_syntax", "clark_coref", "framenet")  # of the offline data's readers
