"""The typed shape of the run-wide config and the enums every group's schema uses.

Each analysis's config group is typed by the dataclasses of its own package
(pipeline/analyses/<name>/settings.py); the whole composition's schema (`config_schema` in
Hydra's ConfigStore, pipeline/core/config_schema.py) is `RunConfig` below plus one field per
group, a stage's the same with only its own and its upstream stages' groups typed
(pipeline/core/stage_schema.py).
A field declares a type and no value (MISSING; a nested group's field only its shape): each
value lives in conf/ alone, so there is no second default to fall out of step with it
(`tests/core/test_config.py` fails on one, and on a composition that leaves a key missing).

`conf/config.yaml` starts from the `config_schema` node, so every YAML value is checked
against these types when Hydra composes (under `dvc exp run -S`, `dvc repro`'s params.yaml,
a Hydra app or a test): a wrong type or an unknown key fails at composition, naming the key
(`finetune.epochs=three` -> "Value 'three' of type 'str' could not be converted to Integer
... full_key: finetune.epochs"). Choices with a fixed set of values are enums, lists of such
choices (`tasks`, measures, pattern classes) lists of enums, so a misspelt choice fails the
same way (`tasks=[sst3]` -> "Invalid value 'sst3', expected one of [cola, ...]  full_key:
tasks[0]"): under `dvc exp run -S` before DVC touches the workspace. A number declares its
bound beside its type (`bounded(least=1)`, pipeline/core/bounds.py), and one out of it fails
the same way (`finetune.epochs=0` -> "finetune.epochs=0: must be at least 1; set
finetune.epochs=1 or more").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Optional, TypeVar

from omegaconf import MISSING, OmegaConf

from pipeline.core.bounds import bounded
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
    # word pieces per GLUE example (finetune, dump_attention, ablate): [CLS] and [SEP] at least
    max_length: int = bounded(least=2)


@dataclass
class CompileConfig:
    enabled: bool = MISSING  # torch.compile fine-tuning, the dump, the sweeps and importance
    pad_multiple: int = MISSING  # compiled: each batch padded up to a multiple of this length
    backend: str = MISSING  # torch.compile's backend (inductor; aot_eager needs no compiler)


@dataclass
class RunConfig:
    """The run-wide settings: the composition's keys that no analysis owns (the composed
    schema adds one field per analysis's group: pipeline/core/config_schema.py)."""

    paths: PathsConfig = field(default_factory=PathsConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    shared: SharedConfig = field(default_factory=SharedConfig)
    experiment_name: str = MISSING
    tasks: list[Task] = MISSING
    seed: int = MISSING  # data samples' seed and the primary fine-tuning seed (must be in seeds)
    seeds: list[int] = MISSING  # fine-tuning seeds (README, Seeds)
    seed_in_seeds: bool = MISSING  # `${seed_in_seeds:...}` in conf/config.yaml: checked
    settings_in_bounds: bool = MISSING  # `${settings_in_bounds:}` there: every bound checked
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
