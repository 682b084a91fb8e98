"""The key of the inputs a Hydra job makes for later stages (prepared data, fine-tuned models,
attention stores): every setting that made them.

An input is made by one stage (its `producer`: prepare, framenet_data, finetune,
dump_attention) from the outputs of the stages upstream of it, so its settings are the
config keys that the producer and every stage upstream of it read (their `params` in
pipeline/dag/declarations.py), taken from the job's config, with two readings for a job of
one task: `tasks` becomes the job's `task` (its spec from conf/task/), which every per-task
stage reads, and `paths.*` are left out (they say where files lie, not what they hold; a
folder named on the command line is read as given). The offline data sets are no setting:
data_sources checks them and DVC reruns what reads them when they change.

The digest of those settings names the folder the inputs lie in:
<paths.runs>/<profile>/<model>/<producer>[-<task>]-<digest>/, with the settings written
beside them (`MANIFEST`), so two jobs that differ in any of them never read each other's.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

from pipeline.core import layout
from pipeline.core.io import write_text
from pipeline.dag.declarations import DATA, Per, Upstream, stage

MANIFEST = "settings.yaml"  # the settings an input folder was made under, beside it
DIGEST_CHARS = 8


@cache
def chain(producer: str) -> tuple[str, ...]:
    """`producer` and every stage upstream of it whose outputs it reads (outputs in the DVC
    cache: prepared data, models, stores), upstream first: ("prepare", "finetune") for
    finetune."""
    found: list[str] = []
    for item in stage(producer).inputs:
        name = item.stage if isinstance(item, Upstream) else _writer_of(item)
        for upstream in chain(name) if name else ():
            if upstream not in found:
                found.append(upstream)
    return (*found, producer)


def _writer_of(path: str) -> str | None:
    """The stage whose cached output `path` is, or lies under (data/glue/<task> -> prepare)."""
    from pipeline.dag.declarations import STAGES

    if not path.startswith(f"{DATA}/"):
        return None
    for declared in STAGES:
        if any(path == out or path.startswith(f"{out}/") for out in declared.outs):
            return declared.name
    return None


def per_task(producer: str) -> bool:
    """Whether `producer` writes one folder per task (so its inputs are keyed per task)."""
    return any(_reads_tasks(name) for name in chain(producer))


def _reads_tasks(name: str) -> bool:
    declared = stage(name)
    return declared.per is Per.TASK_SEED or declared.task_configs


def settings(cfg: DictConfig, producer: str) -> dict[str, Any]:
    """Every setting of `cfg` that the inputs `producer` makes depend on, by key."""
    keys: dict[str, None] = {}
    for name in chain(producer):
        keys.update(dict.fromkeys(k for k in stage(name).params if not k.startswith("paths.")))
        if _reads_tasks(name):
            keys["task"] = None
    keys.pop("tasks", None)  # a job of one task reads that task's spec (`task`)
    return {key: _plain(OmegaConf.select(cfg, key)) for key in sorted(keys)}


def _plain(value: Any) -> Any:
    """`value` as plain YAML: mappings and lists of plain values, enums by name."""
    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True, enum_to_str=True)
    return value.name if isinstance(value, Enum) else value


def digest(values: dict[str, Any]) -> str:
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


def folder(cfg: DictConfig, producer: str) -> Path:
    """Where the inputs `producer` makes under `cfg`'s settings lie: <paths.runs>/<profile>/
    <model>/<producer>[-<task>]-<digest> (pipeline/core/layout.py)."""
    task = cfg.task.name if per_task(producer) else None
    label = "-".join([producer, *([task] if task else []), digest(settings(cfg, producer))])
    return layout.keyed_inputs(cfg.paths.runs, cfg.experiment_name, cfg.model.name, label)


def write_manifest(cfg: DictConfig, producer: str) -> Path:
    """Write the settings `producer`'s inputs are made under beside them (atomically); the
    folder."""
    where = folder(cfg, producer)
    manifest = {"made_by": f"stages.{producer}", "settings": settings(cfg, producer)}
    write_text(where / MANIFEST, yaml.safe_dump(manifest, sort_keys=False))
    return where


def differing(cfg: DictConfig, other: DictConfig, producer: str) -> list[str]:
    """The keys of `producer`'s settings whose values differ between two configs."""
    mine, theirs = settings(cfg, producer), settings(other, producer)
    return [key for key in mine if mine[key] != theirs.get(key)]
