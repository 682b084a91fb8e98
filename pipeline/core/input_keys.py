"""The key of the inputs a Hydra job makes for later stages (prepared data, fine-tuned models,
attention stores): every setting that made them.

An input is made by one stage (its `producer`: one whose declaration says what it `makes`)
from the outputs of the stages upstream of it, so its settings are the config keys that the
producer and every stage upstream of it read (their `params`; a stage is upstream when the
producer reads its cached outputs: stage_inputs.yaml, generated from the stage declarations
by pipeline/dag/stage_inputs.py), taken from the job's config, with two readings for a job of
one task: `tasks` becomes the job's `task` (its spec from conf/task/), which every per-task
stage reads, and `paths.*` are left out (they say where files lie, not what they hold; a
folder named on the command line is read as given). The offline data sets are no setting:
data_sources checks them and DVC reruns what reads them when they change. Where a stage reads
the `model` settings and `model.name_or_path` is a local folder (pkg:// included), the digest
of the model's files is one more setting (`model_files`), so new weights under the same path
key new inputs; a hub id adds nothing (its revision is the user's to pin).

The digest of those settings names the folder the inputs lie in:
<paths.runs>/<profile>/<model>/<producer>[-<task>]-<digest>/, with the settings written
beside them (`MANIFEST`), so two jobs that differ in any of them never read each other's.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

from pipeline.core import layout, model_files
from pipeline.core.config import CONF_DIR
from pipeline.core.io import write_text

STAGE_INPUTS = CONF_DIR.parent / "stage_inputs.yaml"  # generated from the declarations
MANIFEST = "settings.yaml"  # the settings an input folder was made under, beside it
DIGEST_CHARS = 8
MODEL_FILES = "model_files"  # the key of the model's files' digest among the settings


@dataclass(frozen=True)
class Made:
    """What a producer makes for a later stage, as its declaration says: in words (`what`),
    under which `paths` key, and where one task's and seed's input lies there."""

    what: str
    under: str  # `data` or `outputs`
    path: str  # with `{task}` and `{seed}`

    def of(self, root: Path, task: str, seed: int) -> Path:
        """The input of `task` and `seed` in folder `root`, laid out as `paths.<under>`."""
        return root / self.path.format(task=task, seed=seed)


@cache
def _declared() -> dict[str, dict]:
    """The stages' entries of stage_inputs.yaml."""
    return yaml.safe_load(STAGE_INPUTS.read_text(encoding="utf-8"))["stages"]


def made(name: str) -> Made | None:
    """What stage `name` makes for later stages; None for a stage that makes none."""
    makes = _declared()[name].get("makes")
    return None if makes is None else Made(**makes)


def producer_of(under: str, folder: str) -> str | None:
    """The stage that makes the inputs in `folder` of `paths.<under>` (`glue` of `data`:
    prepare), or None where none does."""
    found = (
        name
        for name in _declared()
        if (made_here := made(name))
        and (made_here.under, made_here.path.split("/")[0]) == (under, folder)
    )
    return next(found, None)


def chain(producer: str, results: bool = False) -> tuple[str, ...]:
    """`producer` and every stage upstream of it whose cached outputs it reads (prepared
    data, models, stores; their results too when `results`), upstream first: ("prepare",
    "finetune") for finetune."""
    return (*_declared()[producer]["upstream_results" if results else "upstream"], producer)


def per_matrix_task(name: str) -> bool:
    """Whether dvc.yaml runs stage `name` once per task (and fine-tuning seed)."""
    return _declared()[name]["per_task"]


def _reads_tasks(name: str) -> bool:
    """Whether stage `name` reads a task's spec (it runs per task, or reads conf/task/)."""
    return _declared()[name]["reads_tasks"]


def per_task(producer: str) -> bool:
    """Whether the inputs `producer` makes for a job depend on its task (a folder per task)."""
    return any(_reads_tasks(name) for name in chain(producer))


def settings(cfg: DictConfig, producer: str) -> dict[str, Any]:
    """Every setting of `cfg` that the inputs `producer` makes depend on, by key."""
    return settings_of(cfg, chain(producer))


def settings_of(cfg: DictConfig, stages: tuple[str, ...]) -> dict[str, Any]:
    """Every setting of `cfg` that the outputs of `stages` depend on, by key."""
    keys: dict[str, None] = {}
    for name in stages:
        params = _declared()[name]["params"]
        keys.update(dict.fromkeys(k for k in params if not k.startswith("paths.")))
        if _reads_tasks(name):
            keys["task"] = None
    keys.pop("tasks", None)  # a job of one task reads that task's spec (`task`)
    found = {key: _plain(OmegaConf.select(cfg, key)) for key in sorted(keys)}
    if "model" in keys:  # a stage that loads the model reads its whole group
        files = model_files.files_digest(cfg.model)
        if files is not None:
            found[MODEL_FILES] = files
    return found


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
    """The keys (down to the leaves: `finetune.learning_rate`) of `producer`'s settings whose
    values differ between two configs."""
    return differing_of(cfg, other, chain(producer))


def differing_of(cfg: DictConfig, other: DictConfig, stages: tuple[str, ...]) -> list[str]:
    """`differing` over the settings the outputs of `stages` depend on."""
    return _differing(settings_of(cfg, stages), settings_of(other, stages), "")


def _differing(mine: Any, theirs: Any, where: str) -> list[str]:
    if not (isinstance(mine, dict) and isinstance(theirs, dict)):
        return [] if mine == theirs else [where]
    keys = [*mine, *(k for k in theirs if k not in mine)]
    found = (_differing(mine.get(k), theirs.get(k), f"{where}.{k}" if where else k) for k in keys)
    return [key for keys_below in found for key in keys_below]
