"""The schema a stage's composition is typed by, and the one Hydra composes with.

A stage types the run-wide settings (`RunConfig`, pipeline/core/schema.py) and the config
groups it reads or that a stage upstream of it reads, each by its analysis's settings
dataclass; every other analysis's group stays in the composition, untyped (its values are
data: conf/config.yaml's defaults list and the profiles set them, but the stage neither
reads them nor imports their schemas). Which groups a stage types is generated from the
stage declarations into `stage_groups.yaml` (pipeline/dag/stage_groups.py); a stage module
no declaration names (a test's, a script's) types every group, as the whole composition
(pipeline/core/config_schema.py) does. So a stage imports only the settings modules of its
own groups and its upstream stages': dvc.yaml's deps follow (pipeline/dag/imports.py), and
an edit of one analysis's settings.py reruns only the stages that type its group.

The schema in use is the `config_schema` node of Hydra's ConfigStore, which conf/config.yaml's
defaults list starts from: a stage's run stores its own there for its whole run (`using`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import field, make_dataclass
from functools import cache
from typing import Any

import yaml
from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

from pipeline.core.bounds import check_bounds
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.schema import RunConfig, seed_in_seeds

STAGE_GROUPS = CONF_DIR.parent / "stage_groups.yaml"  # generated: each stage's typed groups
STAGE_PREFIX = "Config_"  # a stage's schema is the class Config_<stage> of this module
NODE = "config_schema"  # the schema's name in the ConfigStore (conf/config.yaml's first default)


@cache
def _declared() -> dict[str, Any]:
    """stage_groups.yaml: `groups` (group -> its owner package), `stages` (stage -> groups)."""
    return yaml.safe_load(STAGE_GROUPS.read_text(encoding="utf-8"))


def owners() -> dict[str, str]:
    """Every analysis's config group -> the package whose settings.py types it, in the order
    of conf/config.yaml's defaults list."""
    return dict(_declared()["groups"])


def typed_groups(stage: str) -> list[str]:
    """The groups stage `stage` types: its own and its upstream stages' (every group for a
    stage no declaration names)."""
    return list(_declared()["stages"].get(stage, owners()))


def settings_module(group: str) -> str:
    """The module that types config group `group`: its owner's settings.py."""
    return f"pipeline.analyses.{owners()[group]}.settings"


def group_schema(group: str) -> type:
    """The settings dataclass of config group `group`, from its owner's `SETTINGS`."""
    # imported by name, not by `part`: imports.py adds these modules to the stage's deps
    declared = getattr(importlib.import_module(settings_module(group)), "SETTINGS", None)
    if declared is None or declared.group != group:
        raise PipelineError(
            f"stage_groups.yaml says {settings_module(group)} types group `{group}`, which it "
            "does not declare; regenerate it with `python -m pipeline.dag.dvc_yaml`"
        )
    return declared.schema


def build(groups: Mapping[str, type | None], name: str = "Config") -> type:
    """The run-wide settings, then one field per group in the order given: typed by its
    dataclass, or untyped (any mapping) where `groups` gives None; a class named `name` of
    this module (the caller names its own where it holds it)."""
    schema = make_dataclass(
        name,
        [
            (group, Any, field(default=MISSING))
            if typed is None
            else (group, typed, field(default_factory=typed))
            for group, typed in groups.items()
        ],
        bases=(RunConfig,),
    )
    schema.__module__ = __name__
    schema.__doc__ = "A composition: the run-wide settings, one field per config group."
    return schema


@cache
def for_stage(stage: str) -> type:
    """The schema stage `stage`'s composition is typed by: `Config_<stage>` of this module."""
    typed = typed_groups(stage)
    groups = {group: group_schema(group) if group in typed else None for group in owners()}
    return build(groups, f"{STAGE_PREFIX}{stage}")


def __getattr__(name: str) -> type:
    """`Config_<stage>`, as a launcher's worker process unpickles the schema a job composed
    with: by reference, so the worker imports no other settings than the stage's."""
    if name.startswith(STAGE_PREFIX):
        return for_stage(name.removeprefix(STAGE_PREFIX))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def registered() -> type:
    """The schema in use: the one stored in the ConfigStore."""
    if not _stored():
        raise PipelineError(
            "no config schema is registered; import pipeline.core.config_schema (the whole "
            "composition's) or run inside stage_schema.using(stage_schema.for_stage(stage))"
        )
    return OmegaConf.get_type(ConfigStore.instance().load(f"{NODE}.yaml").node)


def register(schema: type) -> None:
    """Store `schema` as the one Hydra composes with (replacing any stored before)."""
    ConfigStore.instance().store(name=NODE, node=schema)


@contextmanager
def using(schema: type) -> Iterator[None]:
    """`schema` registered while the block runs; the one before it afterwards."""
    store = ConfigStore.instance()
    before = store.load(f"{NODE}.yaml").node if _stored() else None
    register(schema)
    try:
        yield
    finally:
        if before is None:
            store.repo.pop(f"{NODE}.yaml")
        else:
            store.store(name=NODE, node=before)


def _stored() -> bool:
    return f"{NODE}.yaml" in ConfigStore.instance().list("")


def settings_in_bounds(*, _root_: Mapping[str, Any]) -> bool:
    """True if every bounded setting of the composed config lies in its bound (`bounded`,
    pipeline/core/bounds.py), else a one-line error naming the key, the value and the fix.
    Hydra resolves `settings_in_bounds` in conf/config.yaml with it, so composing checks it."""
    check_bounds(_root_, registered())
    return True


OmegaConf.register_new_resolver("seed_in_seeds", seed_in_seeds, replace=True)
OmegaConf.register_new_resolver("settings_in_bounds", settings_in_bounds, replace=True)
