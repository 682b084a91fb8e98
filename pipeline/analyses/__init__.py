"""The analyses: one package per analysis, found by scanning this folder.

`pipeline/analyses/<name>/` holds everything one analysis declares: its settings, the stage
that runs it, its report section, the results it writes (typed), and the claims that read
them. Nothing lists the packages; `names()` finds them, and the generated files (dvc.yaml,
params.yaml, the config's defaults list, the report's sections, the claims table) are built
from what they declare (pipeline/analyses/analysis.py, groups.py, catalog.py).

Beside this folder, each folder that $DARK_SECRETS_ANALYSES names (several: separated by
`os.pathsep`) is scanned too: a folder of analysis packages laid out as this one, with their
groups' values in its own `conf/<group>/default.yaml` (a test's toy analysis in a temporary
folder). Its packages import as `pipeline.analyses.<name>` like this folder's.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError

HERE = Path(__file__).parent
EXTRA_ROOTS = "DARK_SECRETS_ANALYSES"  # the environment variable naming more folders to scan


def roots() -> tuple[Path, ...]:
    """The folders of analysis packages: this one, then those $DARK_SECRETS_ANALYSES names."""
    extra = os.environ.get(EXTRA_ROOTS, "")
    return (HERE, *(Path(folder).resolve() for folder in extra.split(os.pathsep) if folder))


__path__.extend(str(root) for root in roots()[1:])  # so their packages import from here


def _in(root: Path) -> list[str]:
    return [
        folder.name
        for folder in root.iterdir()
        if folder.is_dir() and folder.name.isidentifier() and any(folder.glob("*.py"))
    ]


def names(root: Path | None = None) -> list[str]:
    """The analysis packages under `root` (None: every folder of `roots()`), by name: every
    sub-folder whose name is an identifier and that holds Python files."""
    found = [name for folder in ([root] if root else roots()) for name in _in(folder)]
    twice = sorted({name for name in found if found.count(name) > 1})
    if twice:
        raise PipelineError(
            f"analysis package {twice[0]} is in more than one folder of {EXTRA_ROOTS}; "
            "rename one of them"
        )
    return sorted(found)


def folder(name: str) -> Path:
    """The folder of analysis package `name`."""
    return next(root / name for root in roots() if (root / name).is_dir())


def conf_dir(name: str) -> Path:
    """The conf/ folder that holds the values of analysis `name`'s config group: the
    project's, or that of the extra folder it lies in."""
    root = folder(name).parent
    return CONF_DIR if root == HERE else root / "conf"


def part(name: str, module: str) -> ModuleType | None:
    """Module `module` (e.g. "claims", "results") of analysis `name`, or None where the
    analysis has none."""
    if not (folder(name) / f"{module}.py").exists():
        return None
    return importlib.import_module(f"{__name__}.{name}.{module}")
