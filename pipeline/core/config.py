"""Config helpers: the names each config group offers, and shared paths."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.core.errors import PipelineError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def group_options(group: str) -> list[str]:
    """The option names of a config group, e.g. `group_options("task")` -> ["cola", ...]."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def check_option(group: str, name: str) -> None:
    """Raise a one-line error if `name` is not an option of config group `group`."""
    valid = group_options(group)
    if name not in valid:
        raise PipelineError(f"unknown {group} '{name}'; valid {group}s: {', '.join(valid)}")


def shared_data_dir(configured: str) -> Path:
    """The folder of offline data sets: $DARK_SECRETS_DATA, else `configured`
    (`paths.shared_data`)."""
    return Path(os.environ.get("DARK_SECRETS_DATA") or configured)


def glue_dir(configured: str | None, shared_data: str) -> Path:
    """The classic glue_data folder: $GLUE_DIR, else `configured` (`paths.glue_dir`), else
    glue_data in the shared data folder (`paths.shared_data`)."""
    explicit = os.environ.get("GLUE_DIR") or configured
    return Path(explicit) if explicit else shared_data_dir(shared_data) / "glue_data"
