"""Every DVC stage, declared once: what it runs per, the config keys it reads, its inputs and
its outputs. dvc.yaml is generated from these declarations and from the imports of each
stage's module (`python -m pipeline.dag.dvc_yaml`); a stage's results lie where
pipeline/core/layout.py puts them, for the stage that writes them and the ones that read them.

Adding a stage: write stages/<name>.py, add its `Stage` below, regenerate dvc.yaml.
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


READERS_GROUPS = ("clark_syntax", "clark_coref", "framenet")  # of the offline data's readers

STAGES: tuple[Stage, ...] = (
    Stage(
        "data_sources",
        Per.RUN,
        # whole groups: each data set's reader takes its group's settings (the stage runs on
        # every `dvc repro` anyway)
        ("tasks", "paths.shared_data", "paths.glue_dir", "prepare", *READERS_GROUPS),
        results=(),
        kept_outs=tuple(data_digest(name) for name in layout.DATA_SOURCES),
        task_configs=True,
        always_changed=True,
        note="the offline data sets live outside the repo (DARK_SECRETS_DATA may point anywhere):\n"
        "this stage runs on every `dvc repro`, checks them and writes a digest of the files\n"
        "each reader reads; a reader reruns when its digest changes",
    ),
    Stage(
        "prepare",
        Per.RUN,
        ("seed", "tasks", "prepare", "paths.shared_data", "paths.glue_dir"),
        results=("metrics",),
        outs=(f"{DATA}/glue",),
        inputs=(data_digest("glue"),),
        task_configs=True,
    ),
    Stage(
        "finetune",
        Per.TASK_SEED,
        (*MODEL, "finetune", "precision", "deterministic", "compile"),
        outs=(str(layout.model(OUTPUTS, TASK, SEED)),),
        kept_while_running=True,
        inputs=(f"{DATA}/glue/{TASK}",),
        dvc_plots=(DvcPlot("loss.csv", "linear", "step", "loss"),),
        note="per (task, fine-tuning seed): `seeds` lists the seeds; `seed` (the primary one, in\n"
        "`seeds`) seeds the data samples, so every seed is scored on the same rows",
    ),
    Stage(
        "dump_attention",
        Per.TASK_SEED,
        (*MODEL, "seed", "dump_attention", "precision", "compile"),
        results=("metrics",),
        outs=(str(layout.attention_store(f"{OUTPUTS}/attention", TASK, SEED)),),
        kept_while_running=True,
        inputs=(f"{DATA}/glue/{TASK}", Upstream("finetune", "models")),
        note="every stage below that reads a fine-tuned model, or the dump of one, runs per\n"
        "(task, seed) too and writes into seed<N>/ folders (per seed only: patterns_apply, table1)",
    ),
    Stage(
        "patterns_train",
        Per.RUN,
        ("seed", "model.name", "patterns"),
        outs=(str(layout.pattern_classifier(OUTPUTS)), str(layout.pattern_labels(OUTPUTS))),
        kept_while_running=True,
        # the label folders it reads: every folder, since DVC cannot interpolate the list
        # patterns.labels_from into deps (a change of the list reruns it through params)
        inputs=(f"{DATA}/annotations",),
        dvc_plots=(DvcPlot("confusion.csv", "confusion", "predicted", "actual"),),
        dvc_figures=("fig1_pattern_examples.png",),
    ),
    Stage(
        "patterns_apply",
        Per.SEED,
        ("tasks", "seed", "model.name", "patterns"),
        outs=(str(layout.pattern_predictions(OUTPUTS, SEED)),),
        inputs=(*STORE, Upstream("patterns_train", "classifier")),
        dvc_plots=(DvcPlot("shares.csv", "bar_horizontal", "share", "class"),),
        dvc_figures=("fig2_pattern_shares.png",),
    ),
    Stage(
        "clark_heads",
        Per.TASK_SEED,
        ("seed", "model.name", "clark_heads"),
        inputs=STORE,
    ),
    Stage(
        "clark_syntax",
        Per.RUN,
        ("model", "device", "seed", "clark_syntax", "paths.shared_data"),
        inputs=(data_digest("ud"),),
        dvc_plots=(DvcPlot("relations.csv", "bar_horizontal", "head_accuracy", "relation"),),
        dvc_figures=("relations.png",),
    ),
    Stage(
        "clark_coref",
        Per.RUN,
        ("model", "device", "seed", "clark_coref", "paths.shared_data"),
        inputs=(data_digest("gap"),),
        dvc_plots=(DvcPlot("heads.csv", "scatter", "select_accuracy", "report_accuracy"),),
        dvc_figures=("heads.png",),
    ),
    Stage(
        "ablate",
        Per.TASK_SEED,
        (*MODEL, "seed", "ablate", "precision", "deterministic", "compile"),
        inputs=(f"{DATA}/glue/{TASK}", Upstream("finetune", "models")),
        dvc_plots=(
            DvcPlot("layers.csv", "linear", "layer", "delta"),
            DvcPlot("pruning.csv", "linear", "fraction_pruned", "accuracy"),
        ),
    ),
    Stage(
        "cross_seed",
        Per.RUN,
        ("tasks", "seeds", "model.name"),
        inputs=(Upstream("finetune", "metrics"), Upstream("ablate", "plots")),
        task_configs=True,
        dvc_figures=("metric_by_seed.png",),
    ),
    Stage(
        "gates",
        Per.TASK_SEED,
        (*MODEL, "seed", "gates"),
        inputs=(
            f"{DATA}/glue/{TASK}",
            Upstream("finetune", "models"),
            Upstream("ablate", "plots"),
        ),
        dvc_plots=(DvcPlot("curves.csv", "linear", "heads_kept", "metric"),),
    ),
    Stage(
        "measures",
        Per.TASK_SEED,
        (*MODEL, "seed", "measures"),
        inputs=(f"{DATA}/glue/{TASK}", Upstream("finetune", "models")),
    ),
    Stage(
        "analyze",
        Per.TASK_SEED,
        ("seed", "model.name", "analyze"),
        inputs=STORE,
        dvc_plots=(DvcPlot("cosine_layers.csv", "linear", "layer", "cosine"),),
    ),
    Stage(
        "framenet_data",
        Per.RUN,
        (
            "paths.shared_data",
            *(f"framenet.{k}" for k in ("source", "max_tokens", "max_fe_tokens", "target_window")),
        ),
        results=("metrics",),
        outs=(f"{DATA}/framenet/sentences.jsonl",),
        inputs=(data_digest("framenet"),),
    ),
    Stage(
        "framenet",
        Per.RUN,
        (*MODEL, "seed", "framenet"),
        inputs=(f"{DATA}/framenet/sentences.jsonl",),
        dvc_figures=("fig3_heads.png", "fig3_top_heads.png", "fig4_top_heads.png"),
    ),
    Stage(
        "table1",
        Per.SEED,
        ("tasks", "seed", "model.name", "table1"),
        inputs=(Upstream("finetune", "plots", "predictions.csv"),),
        task_configs=True,
        dvc_plots=(DvcPlot("table1.csv", "bar_horizontal", "finetuned", "task"),),
        dvc_figures=("table1.png",),
    ),
    Stage(
        "claims",
        Per.RUN,
        ("tasks", "seed", "seeds", "model.name", "experiment_name"),
        inputs=(
            "pipeline/claims/amendments.yaml",  # the registry's versions, read at run time
            "pipeline/claims/registry_fixture",  # the registry's digest measures on it
            "data/annotations",  # and pins the label files the pattern classifier learns from
            "conf",  # which the registry composes under each judged profile (measurement_pins)
            Upstream("prepare", "metrics"),
            Upstream("table1", "metrics"),
            Upstream("patterns_train", "metrics"),
            Upstream("patterns_train", "plots", "cross_validation.csv"),
            Upstream("patterns_apply", "metrics"),
            Upstream("analyze", "metrics"),
            Upstream("ablate", "metrics"),
            Upstream("framenet", "plots", "heads.csv"),
            Upstream("clark_heads", "metrics"),
            Upstream("clark_syntax", "metrics"),
            Upstream("clark_coref", "metrics"),
            Upstream("measures", "metrics"),
            Upstream("ablate", "plots"),
        ),
        dvc_figures=("forest.png",),
    ),
    Stage(
        "report",
        Per.RUN,
        (),
        whole_config=True,  # the page shows the whole config
        results=(),
        outs=(str(layout.report_page(OUTPUTS)),),
        inputs=(f"{OUTPUTS}/figures", f"{OUTPUTS}/plots", f"{OUTPUTS}/metrics"),
        note="last in the DAG: one page of every stage's figures, tables and metrics",
    ),
)


def stage(name: str) -> Stage:
    """The declaration of stage `name`."""
    found = [s for s in STAGES if s.name == name]
    if not found:
        raise KeyError(f"no stage '{name}' is declared in pipeline/dag/declarations.py")
    return found[0]
