"""The typed shape of every config group: dataclasses registered in Hydra's ConfigStore.

A field declares a type and no value (MISSING; a nested group's field only its shape): each
value lives in conf/ alone, so there is no second default to fall out of step with it
(`tests/core/test_config.py` fails on one, and on a composition that leaves a key missing).

`conf/config.yaml` starts from the `config_schema` node stored here, so every YAML value is
checked against these types when Hydra composes (under `dvc exp run -S`, `dvc repro`'s
params.yaml, a Hydra app or a test): a wrong type or an unknown key fails at composition,
naming the key (`finetune.epochs=three` -> "Value 'three' of type 'str' could not be
converted to Integer ... full_key: finetune.epochs"). Choices with a fixed set of values are
enums, lists of such choices (`tasks`, measures, pattern classes) lists of enums, so a misspelt
choice fails the same way (`tasks=[sst3]` -> "Invalid value 'sst3', expected one of [cola,
...]  full_key: tasks[0]"): under `dvc exp run -S` before DVC touches the workspace.

DVC composes params.yaml in its own process; it imports this module through the Hydra plugin
in `tools/hydra_plugins/` (see `.dvc/config`, `hydra.plugins_path`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Optional, TypeVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

from pipeline.core.config import CONF_DIR, check_option, group_options
from pipeline.core.errors import PipelineError

# Optional[...] rather than `X | None`: OmegaConf reads typing.Optional, not PEP 604 unions.
# ruff: noqa: UP045

Group = TypeVar("Group")


class GlueSource(StrEnum):
    local = "local"  # the classic glue_data folder
    hub = "hub"  # nyu-mll/glue through `datasets`


class Quantize(StrEnum):
    none = "none"  # float16, lossless
    uint8 = "uint8"  # 8-bit codes with a per-row float16 scale


class DisableMode(StrEnum):
    uniform = "uniform"  # a disabled head attends uniformly (Kovaleva et al.)
    zero = "zero"  # a disabled head outputs zeros (Michel et al.)


class ImportanceSplit(StrEnum):
    train = "train"
    eval = "eval"


class Precision(StrEnum):
    auto = "auto"  # bf16 on a CUDA GPU that has it, else fp16 there; fp32 on CPU
    fp32 = "fp32"
    bf16 = "bf16"  # autocast to bfloat16
    fp16 = "fp16"  # autocast to float16 (a gradient scaler when training)


# The GLUE tasks are the files of conf/task/ (one declaration: a new task is a new file).
Task = StrEnum("Task", {name: name for name in group_options("task")})


class Measure(StrEnum):
    """What an attention map holds (pipeline/attention/measures.py)."""

    weights = "weights"  # the attention probabilities alpha
    norms = "norms"  # the value-weighted norms ||alpha f(x)|| (Kobayashi et al. 2020)
    rollout = "rollout"  # the rollout of the weights (Abnar and Zuidema 2020)


class CapturedMeasure(StrEnum):
    """The measures the dump captures in a forward pass (rollout is computed from weights)."""

    weights = "weights"
    norms = "norms"


# The five attention-pattern types of Kovaleva et al., in the order of the classifier's outputs
# (pipeline/kovaleva/patterns/__init__.py defines them).
PatternClass = StrEnum(
    "PatternClass",
    {c: c for c in ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")},
)


class Variant(StrEnum):
    pretrained = "pretrained"
    finetuned = "finetuned"


@dataclass
class PathsConfig:
    shared_data: str = MISSING
    glue_dir: Optional[str] = MISSING
    data: str = MISSING
    outputs: str = MISSING
    runs: str = MISSING


@dataclass
class SplitZip:
    """A model folder shipped as the numbered pieces of one zip, one piece per PyPI package
    (pipeline/models/zip_parts.py joins them into the model's `name_or_path`)."""

    pieces: dict[str, str] = MISSING  # package -> the piece's file inside it, in join order
    folder: str = MISSING  # the model folder inside the joined zip
    sha256: str = MISSING  # of the joined folder's model.safetensors


@dataclass
class ModelConfig:
    name: str = MISSING
    name_or_path: Optional[str] = MISSING  # hub id, local folder or pkg://package/folder
    tokenizer: Optional[str] = MISSING  # null: name_or_path
    random_config: Optional[dict[str, Any]] = MISSING  # a config of model_type (bert) built here
    split_zip: Optional[SplitZip] = MISSING  # null: not shipped as pieces


@dataclass
class LocalGlueLayout:
    folder: str = MISSING
    files: dict[str, str] = MISSING  # split -> file name
    header: bool = MISSING
    columns: dict[str, Any] = MISSING  # column -> header name or 0-based position


@dataclass
class TaskConfig:
    name: str = MISSING
    hub_config: str = MISSING
    text_columns: list[str] = MISSING
    label_names: Optional[list[str]] = MISSING  # None: regression
    is_regression: bool = MISSING
    metrics: list[str] = MISSING
    main_metric: str = MISSING
    eval_split: str = MISSING
    local: LocalGlueLayout = field(default_factory=LocalGlueLayout)

    @property
    def num_labels(self) -> int:
        return 1 if self.is_regression else len(self.label_names or ())


@dataclass
class SharedConfig:
    max_length: int = MISSING  # word pieces per GLUE example (finetune, dump_attention, ablate)


@dataclass
class CompileConfig:
    enabled: bool = MISSING  # torch.compile fine-tuning, the dump, the sweeps and importance
    pad_multiple: int = MISSING  # compiled: each batch padded up to a multiple of this length
    backend: str = MISSING  # torch.compile's backend (inductor; aot_eager needs no compiler)


@dataclass
class RowFloor:
    train: Optional[int] = MISSING  # rows a task keeps at least of its train split (null: no floor)
    eval: Optional[int] = MISSING  # ... and of its eval split


@dataclass
class PrepareConfig:
    source: GlueSource = MISSING
    max_train_rows: Optional[int] = MISSING
    max_eval_rows: Optional[int] = MISSING
    min_rows: dict[Task, RowFloor] = MISSING  # per task, above the limits

    def row_limit(self, task: str, split: str) -> Optional[int]:
        """The most rows `task` keeps of `split`: the common limit, raised to the task's
        floor (None: every row)."""
        train = split == "train"
        limit = self.max_train_rows if train else self.max_eval_rows
        floor = {str(name): rows for name, rows in self.min_rows.items()}.get(task)
        least = None if floor is None else (floor.train if train else floor.eval)
        return limit if limit is None or least is None else max(limit, least)


@dataclass
class Baselines:
    pretrained_no_finetune: bool = MISSING
    random_init: bool = MISSING


@dataclass
class FinetuneConfig:
    epochs: int = MISSING
    batch_size: int = MISSING
    eval_batch_size: int = MISSING
    learning_rate: float = MISSING
    warmup_ratio: float = MISSING
    weight_decay: float = MISSING
    grad_clip: float = MISSING
    log_every: int = MISSING
    checkpoint_every: int = MISSING  # steps between resumable checkpoints; 0: none
    baselines: Baselines = field(default_factory=Baselines)

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants trained or scored: `finetuned`, then the baselines switched on."""
        wanted = {
            "pretrained": self.baselines.pretrained_no_finetune,
            "random_init": self.baselines.random_init,
        }
        return ("finetuned", *(name for name, on in wanted.items() if on))


@dataclass
class DumpAttentionConfig:
    num_examples: Optional[int] = MISSING
    batch_size: int = MISSING
    quantize: Quantize = MISSING
    row_group_mib: int = MISSING
    measures: list[CapturedMeasure] = MISSING


@dataclass
class PatternSample:
    variants: list[Variant] = MISSING
    classes: list[PatternClass] = MISSING
    per_class: int = MISSING
    boundaries: list[str] = MISSING


@dataclass
class PatternRule:
    mixed: float = MISSING
    dominant: float = MISSING
    block: float = MISSING


@dataclass
class PatternClassifier:
    input_size: int = MISSING
    input_channels: list[str] = MISSING
    channels: list[int] = MISSING
    dropout: float = MISSING
    folds: int = MISSING
    ensemble: int = MISSING
    cv_ensemble: int = MISSING
    workers: int = MISSING
    bootstrap_resamples: int = MISSING
    epochs: int = MISSING
    batch_size: int = MISSING
    learning_rate: float = MISSING
    average_last: int = MISSING
    threads: int = MISSING


@dataclass
class PatternsConfig:
    num_examples: Optional[int] = MISSING
    labels_from: list[str] = MISSING
    sample: PatternSample = field(default_factory=PatternSample)
    heuristic: PatternRule = field(default_factory=PatternRule)
    classifier: PatternClassifier = field(default_factory=PatternClassifier)


@dataclass
class AblateConfig:
    num_examples: Optional[int] = MISSING
    mode: DisableMode = MISSING
    batch_size: int = MISSING
    ablations_per_pass: int = MISSING
    cache_budget_mb: int = MISSING
    importance_split: ImportanceSplit = MISSING
    importance_examples: Optional[int] = MISSING
    prune_step: float = MISSING
    prune_keep: float = MISSING
    bootstrap_resamples: int = MISSING
    permutation_resamples: int = MISSING


@dataclass
class MeasuresConfig:
    num_examples: Optional[int] = MISSING
    batch_size: int = MISSING
    measures: list[Measure] = MISSING
    bootstrap_resamples: int = MISSING


@dataclass
class GatesConfig:
    num_examples: Optional[int] = MISSING  # dev rows evaluated (= ablate.num_examples: same rows)
    train_examples: Optional[int] = MISSING  # train rows the gates are fitted on
    batch_size: int = MISSING
    steps: int = MISSING  # optimiser steps per lambda
    learning_rate: float = MISSING
    init_log_alpha: float = MISSING
    lambdas: list[float] = MISSING  # L0 strengths swept


@dataclass
class TokenTypeRule:
    pos: list[str] = MISSING  # coarse POS tags
    dep: list[str] = MISSING  # dependency labels
    lower: list[str] = MISSING  # lower-cased words


@dataclass
class GridConfig:
    variant: Variant = MISSING
    max_tokens: int = MISSING


@dataclass
class AnalyzeConfig:
    num_examples: Optional[int] = MISSING
    chunk_examples: int = MISSING
    spacy_model: str = MISSING
    token_types: dict[str, TokenTypeRule] = MISSING
    grid: GridConfig = field(default_factory=GridConfig)
    measure: Measure = MISSING  # maps analysed (README, Measures)
    bootstrap_resamples: int = MISSING


@dataclass
class FramenetConfig:
    source: str = MISSING
    max_tokens: int = MISSING
    max_fe_tokens: int = MISSING
    target_window: int = MISSING
    num_sentences: Optional[int] = MISSING
    batch_size: int = MISSING
    top_heads: int = MISSING
    bootstrap_resamples: int = MISSING


@dataclass
class Table1Config:
    bootstrap_resamples: int = MISSING


@dataclass
class Behaviour:
    focus: float = MISSING
    broad: float = MISSING


@dataclass
class ClarkHeadsConfig:
    variant: Variant = MISSING
    measure: Measure = MISSING
    num_examples: Optional[int] = MISSING
    punctuation: list[str] = MISSING
    behaviour: Behaviour = field(default_factory=Behaviour)
    bootstrap_resamples: int = MISSING


@dataclass
class TreebankConfig:
    dir: Optional[str] = MISSING
    train_sentences: Optional[int] = MISSING
    dev_sentences: Optional[int] = MISSING
    measure: Measure = MISSING
    max_length: int = MISSING
    batch_size: int = MISSING
    max_offset: int = MISSING
    min_count: int = MISSING


@dataclass
class ProbeConfig:
    epochs: int = MISSING
    batch_size: int = MISSING
    learning_rate: float = MISSING
    word_vectors: Optional[str] = MISSING


@dataclass
class ClarkSyntaxConfig:
    ud: TreebankConfig = field(default_factory=TreebankConfig)
    probe: ProbeConfig = field(default_factory=ProbeConfig)
    bootstrap_resamples: int = MISSING


@dataclass
class ClarkCorefConfig:
    dir: Optional[str] = MISSING
    select_examples: Optional[int] = MISSING
    report_examples: Optional[int] = MISSING
    max_length: int = MISSING
    batch_size: int = MISSING
    bootstrap_resamples: int = MISSING


@dataclass
class ReportConfig:
    title: str = MISSING


@dataclass
class Config:
    """The whole composition: one field per config group, plus the run-wide settings."""

    paths: PathsConfig = field(default_factory=PathsConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    shared: SharedConfig = field(default_factory=SharedConfig)
    prepare: PrepareConfig = field(default_factory=PrepareConfig)
    finetune: FinetuneConfig = field(default_factory=FinetuneConfig)
    dump_attention: DumpAttentionConfig = field(default_factory=DumpAttentionConfig)
    patterns: PatternsConfig = field(default_factory=PatternsConfig)
    ablate: AblateConfig = field(default_factory=AblateConfig)
    measures: MeasuresConfig = field(default_factory=MeasuresConfig)
    gates: GatesConfig = field(default_factory=GatesConfig)
    analyze: AnalyzeConfig = field(default_factory=AnalyzeConfig)
    framenet: FramenetConfig = field(default_factory=FramenetConfig)
    table1: Table1Config = field(default_factory=Table1Config)
    clark_heads: ClarkHeadsConfig = field(default_factory=ClarkHeadsConfig)
    clark_syntax: ClarkSyntaxConfig = field(default_factory=ClarkSyntaxConfig)
    clark_coref: ClarkCorefConfig = field(default_factory=ClarkCorefConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    experiment_name: str = MISSING
    tasks: list[Task] = MISSING
    seed: int = MISSING  # data samples' seed and the primary fine-tuning seed (must be in seeds)
    seeds: list[int] = MISSING  # fine-tuning seeds (README, Seeds)
    seed_in_seeds: bool = MISSING  # `${seed_in_seeds:...}` in conf/config.yaml: checked
    device: str = MISSING  # auto, cpu, cuda, cuda:N
    precision: Precision = MISSING  # fine-tuning and inference (pipeline/core/precision.py)
    deterministic: bool = MISSING  # deterministic kernels: finetune, ablate (set_determinism)
    compile: CompileConfig = field(default_factory=CompileConfig)


def seed_in_seeds(seed: int, seeds: Sequence[int]) -> bool:
    """True if `seeds` holds the primary `seed`, else a one-line error naming the fix. Hydra
    resolves `seed_in_seeds` in conf/config.yaml with it, so composing checks it."""
    if seed not in seeds:
        seeds = list(seeds)
        raise PipelineError(
            f"`seeds` {seeds} does not contain the primary `seed` {seed}; "
            f"add {seed} to `seeds` or set `seed` to one of {seeds}"
        )
    return True


def typed(schema: type[Group], node: Any) -> Group:
    """A config node (or a dict) as an instance of its schema dataclass, checked against it;
    what `StageRun.settings` gives a stage, for code that reads a group's file on its own."""
    return OmegaConf.to_object(OmegaConf.merge(schema, node))


def load_task(name: str) -> TaskConfig:
    """Task `name` as conf/task/<name>.yaml declares it (the file the Hydra `task` group uses)."""
    check_option("task", name)
    return typed(TaskConfig, OmegaConf.load(CONF_DIR / "task" / f"{name}.yaml"))


def load_model(name: str) -> ModelConfig:
    """Model `name` as conf/model/<name>.yaml declares it (the file of the Hydra `model` group)."""
    check_option("model", name)
    return typed(ModelConfig, OmegaConf.load(CONF_DIR / "model" / f"{name}.yaml"))


def register() -> None:
    """Store the schema as `config_schema` and the `seed_in_seeds` resolver (idempotent)."""
    ConfigStore.instance().store(name="config_schema", node=Config)
    OmegaConf.register_new_resolver("seed_in_seeds", seed_in_seeds, replace=True)


register()
