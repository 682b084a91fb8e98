"""Checking overrides before Hydra composes them: an unknown task, model or profile, or a key
the schema does not declare, fails in one line naming the nearest choices (`finetune.epoch`
-> did you mean `finetune.epochs`?). Stage runs check their command line here, and `dvc exp
run -S` its overrides through the Hydra plugin (tools/hydra_plugins)."""

from __future__ import annotations

import difflib
import re
from typing import Any

from omegaconf import DictConfig, OmegaConf

from pipeline.core.config import CONF_DIR, check_option
from pipeline.core.errors import PipelineError
from pipeline.core.stage_schema import registered

# Config groups whose values are checked before any job starts.
CHECKED_GROUPS = ("task", "model", "experiment")


def _sweep_values(value: str) -> list[str]:
    """The values an override sweeps: `a,b` or `choice(a,b)` -> [a, b]."""
    match = re.fullmatch(r"choice\((.*)\)", value)
    inner = match.group(1) if match else value
    return [v.strip().strip("'\"") for v in inner.split(",") if v.strip()]


def check_overrides(args: list[str]) -> None:
    """Fail on an unknown task, model or experiment, or an unknown key, before Hydra launches
    any job."""
    for arg in args:
        key, sep, value = arg.lstrip("+~").partition("=")
        if sep and key in CHECKED_GROUPS and value not in ("", "null"):
            for option in _sweep_values(value):
                check_option(key, option)
        elif sep and not arg.startswith(("+", "~", "-")):
            check_key(key)


def check_key(key: str) -> None:
    """Fail in one line, with the nearest keys, unless the schema in use (the whole
    composition's, or a stage's: pipeline/core/stage_schema.py) declares `key`
    (`finetune.epoch` -> did you mean `finetune.epochs`?). Keys under a free mapping (e.g.
    `prepare.min_rows.*`, or a group the stage does not type), Hydra's own and config groups
    (`hydra/launcher`) pass: Hydra refuses a key that no value of theirs holds."""
    parts = key.split(".")
    groups = [p.name for p in CONF_DIR.iterdir() if p.is_dir()]
    if parts[0] == "hydra" or "/" in key or (parts[0] in groups and len(parts) == 1):
        return
    node: Any = OmegaConf.structured(registered())
    for depth, part in enumerate(parts):
        if not isinstance(node, DictConfig) or node._metadata.object_type in (None, dict):
            return  # a list, a value or a free mapping: Hydra checks what lies below
        known = [str(k) for k in node.keys()]  # noqa: SIM118 (`in` skips MISSING values)
        if part not in known:
            where = ".".join(parts[:depth])
            near = difflib.get_close_matches(part, known + (groups if not depth else []), n=3)
            hint = (
                f"did you mean {' or '.join(f'`{_join(where, n)}`' for n in near)}?"
                if near
                else f"the keys of `{where or 'the config'}` are {', '.join(known)}"
            )
            raise PipelineError(f"unknown config key `{key}`; {hint}")
        node = node._get_node(part)


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
