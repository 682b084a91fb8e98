"""What tests build rather than load: tiny random BERTs of a given shape, configs composed
once per session, and stage runs of the micro profile."""

from __future__ import annotations

import functools
import json
import typing
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from transformers import (
    AutoModel,
    AutoModelForSequenceClassification,
    BertConfig,
    PretrainedConfig,
    PreTrainedModel,
)

from pipeline.core.config import CONF_DIR
from pipeline.core.config_schema import Config
from pipeline.core.schema import typed
from pipeline.core.stage import StageRun
from tools.params import compose_params


def tiny_bert(
    layers: int = 2,
    heads: int = 3,
    *,
    hidden: int = 24,
    intermediate: int = 32,
    vocab: int = 40,
    positions: int = 16,
    labels: int = 2,
    initializer_range: float = 0.3,
    family: type[PretrainedConfig] = BertConfig,
    classifier: bool = True,
    **extra: Any,
) -> PreTrainedModel:
    """A random BERT of `layers` x `heads`, seeded with 0, without dropout, in eval mode,
    running SDPA: a sequence classifier of `labels` labels, or the bare encoder. The default
    initializer range is large enough that attention maps differ visibly between heads.
    `family` builds a BERT-shaped relative (RobertaConfig) with `extra` config keys."""
    config = family(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=positions,
        num_labels=labels,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=initializer_range,
        **extra,
    )
    torch.manual_seed(0)
    auto = AutoModelForSequenceClassification if classifier else AutoModel
    return auto.from_config(config, attn_implementation="sdpa").eval()


@functools.cache
def composed_yaml(*overrides: str) -> str:
    """The params.yaml text DVC composes for `overrides` (`compose_params`), composed once
    per session: the text is immutable, so every caller may share it."""
    return compose_params(list(overrides))


def composed(*overrides: str) -> DictConfig:
    """The config composed for `overrides` (once per session), as the caller's own copy."""
    return OmegaConf.create(composed_yaml(*overrides))


def micro_run(
    data: Path, outputs: Path, task: str | None = None, settings: dict[str, Any] | None = None
) -> StageRun:
    """One stage's run of the micro profile on the CPU, as DVC runs it, with `paths.data` and
    `paths.outputs` at `data` and `outputs`: `task` for a per-task stage, `settings` by dotted
    key (`device`, `precision`, ...)."""
    cfg = composed("experiment=micro")
    cfg.paths.data, cfg.paths.outputs, cfg.device = str(data), str(outputs), "cpu"
    for key, value in (settings or {}).items():
        OmegaConf.update(cfg, key, value, merge=False)
    if task is not None:
        cfg.task = OmegaConf.load(CONF_DIR / "task" / f"{task}.yaml")
    return StageRun(cfg=cfg, out_root=outputs, under_dvc=True)


def group_settings(group: str, overrides: dict[str, Any] | None = None) -> Any:
    """Config group `group`'s default file (conf/<group>/default.yaml) with `overrides` by
    dotted key, as its schema dataclass: a library's settings as a stage receives them, with
    every value the test does not set taken from the one declaration in conf/."""
    node = OmegaConf.load(CONF_DIR / group / "default.yaml")
    for key, value in (overrides or {}).items():
        OmegaConf.update(node, key, value, merge=False)
    return typed(typing.get_type_hints(Config)[group], node)


def drawn(png: Path) -> str:
    """The caption of figure `png` (its `<name>.json` sidecar, which the report shows under
    it), once the file is checked to be a picture: a PNG that decodes to something other than
    one flat colour."""
    import matplotlib.image

    pixels = matplotlib.image.imread(png)  # [height, width, channels]
    assert pixels.ndim == 3 and min(pixels.shape[:2]) >= 100, (png, pixels.shape)
    assert pixels.reshape(-1, pixels.shape[2]).std(0).max() > 0, f"{png} is blank"
    caption = json.loads(png.with_suffix(".json").read_text())["caption"]
    assert caption.strip(), f"{png} has no caption"
    return caption
