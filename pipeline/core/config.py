"""Config helpers: the names each config group offers, task specs, and shared paths."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from omegaconf import DictConfig, OmegaConf

from pipeline.core.errors import PipelineError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"

Settings = TypeVar("Settings")


def settings_from(cls: type[Settings], node: Mapping, **extra: Any) -> Settings:
    """A settings dataclass filled from the config node's keys of the same names (other keys
    are ignored), plus `extra` values that do not come from the node (e.g. the global seed)."""
    names = [f.name for f in fields(cls) if f.name not in extra]
    return cls(**{name: node[name] for name in names}, **extra)


def group_options(group: str) -> list[str]:
    """The option names of a config group, e.g. `group_options("task")` -> ["cola", ...]."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def check_option(group: str, name: str) -> None:
    """Raise a one-line error if `name` is not an option of config group `group`."""
    valid = group_options(group)
    if name not in valid:
        raise PipelineError(f"unknown {group} '{name}'; valid {group}s: {', '.join(valid)}")


@dataclass(frozen=True)
class TaskSpec:
    """A GLUE task as conf/task/<name>.yaml describes it."""

    name: str
    hub_config: str
    text_columns: tuple[str, ...]
    label_names: tuple[str, ...] | None
    is_regression: bool
    metrics: tuple[str, ...]
    main_metric: str
    eval_split: str
    local: dict

    @property
    def num_labels(self) -> int:
        return 1 if self.is_regression else len(self.label_names or ())

    @classmethod
    def from_config(cls, node: DictConfig | dict) -> TaskSpec:
        data = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else node
        return cls(
            name=data["name"],
            hub_config=data["hub_config"],
            text_columns=tuple(data["text_columns"]),
            label_names=tuple(data["label_names"]) if data["label_names"] else None,
            is_regression=bool(data["is_regression"]),
            metrics=tuple(data["metrics"]),
            main_metric=data["main_metric"],
            eval_split=data["eval_split"],
            local=dict(data["local"]),
        )


def load_task(name: str) -> TaskSpec:
    """The spec of task `name`, read from the same file the Hydra `task` group uses."""
    check_option("task", name)
    return TaskSpec.from_config(OmegaConf.load(CONF_DIR / "task" / f"{name}.yaml"))


def shared_data_dir(cfg: DictConfig) -> Path:
    """The folder of offline data sets: $DARK_SECRETS_DATA, else `paths.shared_data`."""
    return Path(os.environ.get("DARK_SECRETS_DATA") or cfg.paths.shared_data)


def glue_dir(cfg: DictConfig) -> Path:
    """The classic glue_data folder: $GLUE_DIR, else `paths.glue_dir`, else <shared>/glue_data."""
    explicit = os.environ.get("GLUE_DIR") or cfg.paths.get("glue_dir")
    return Path(explicit) if explicit else shared_data_dir(cfg) / "glue_data"
