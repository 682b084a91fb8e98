"""Run one stage as DVC does and record what it really used: `python -m
tests.support.stage_trace OUT.json stages.<name> --dvc [TASK] [--seed SEED]`.

OUT.json gets `modules`, the project files (under pipeline/ and stages/) loaded by the end of
the run, and `reads`, the dotted keys of the config the stage read while it ran (a leaf or a
list by its key; a node converted whole, e.g. by `stage.settings(group)`, by the node's key;
the whole config as ""). Reads made before the stage runs (checking the config against the
schema, `seed` in `seeds`) are not recorded: they cannot change an output, only refuse a run.
"""

from __future__ import annotations

import importlib.util
import json
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from pipeline.core import stage as stage_module
from tests.support.paths import REPO

reads: set[str] = set()
recording: DictConfig | None = None  # the running stage's config (params.yaml's keys)


def _of_params(node: DictConfig | ListConfig) -> bool:
    """A node of the running stage's config (not, e.g., a task's own config file)."""
    return recording is not None and node._get_root() is recording


def _record(node: DictConfig | ListConfig, key: object, value: object) -> None:
    if _of_params(node) and not isinstance(value, DictConfig):  # a DictConfig is walked through
        reads.add(node._get_full_key(key))


def _leaf_reader(original: Callable[..., Any]) -> Callable[..., Any]:
    """`original` (a DictConfig method taking a key) that records the key it returns."""

    def read(self: DictConfig, key: Any, *args: Any, **kwargs: Any) -> Any:
        value = original(self, key, *args, **kwargs)
        _record(self, key, value)
        return value

    return read


def _whole_reader(original: Callable[..., Any]) -> Callable[..., Any]:
    """`original` (taking a config node first, or as `cfg`) that records the node's key."""

    def read(*args: Any, **kwargs: Any) -> Any:
        node = args[0] if args else kwargs.get("cfg")
        if isinstance(node, DictConfig | ListConfig) and _of_params(node):
            reads.add(node._get_full_key(None))
        return original(*args, **kwargs)

    return read


def _recorded(timed: Callable[..., Any]) -> Callable[..., Any]:
    """`timed(run, stage, task)`, which runs the stage, recording reads of the stage's config."""

    def run(stage_fn: Any, stage: Any, *args: Any) -> Any:
        global recording
        recording = stage.cfg
        try:
            return timed(stage_fn, stage, *args)
        finally:
            recording = None

    return run


def main() -> None:
    out, module, *args = sys.argv[1:]
    for name in ("__getattr__", "__getitem__", "get"):
        setattr(DictConfig, name, _leaf_reader(getattr(DictConfig, name)))
    for name in ("items", "values"):
        setattr(DictConfig, name, _whole_reader(getattr(DictConfig, name)))
    for name in ("to_object", "to_container", "to_yaml"):
        setattr(OmegaConf, name, staticmethod(_whole_reader(getattr(OmegaConf, name))))
    stage_module._timed = _recorded(stage_module._timed)
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        loaded = {
            Path(m.__file__).resolve()
            for m in list(sys.modules.values())
            if getattr(m, "__file__", None)
        }
        loaded.add(Path(importlib.util.find_spec(module).origin).resolve())  # ran as __main__
        project = sorted(
            str(path.relative_to(REPO))
            for path in loaded
            if path.is_relative_to(REPO / "pipeline") or path.is_relative_to(REPO / "stages")
        )
        Path(out).write_text(json.dumps({"modules": project, "reads": sorted(reads)}, indent=1))


if __name__ == "__main__":
    main()
