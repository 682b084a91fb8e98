"""The analyses: one package per analysis, found by scanning this folder.

`pipeline/analyses/<name>/` holds everything one analysis declares: its settings, the stage
that runs it, its report section, the results it writes (typed), and the claims that read
them. Nothing lists the packages; `names()` finds them, and the generated files (dvc.yaml,
params.yaml, the config's defaults list, the report's sections, the claims table) are built
from what they declare (pipeline/analyses/analysis.py, groups.py, catalog.py).

The scan reads the folders of this package's `__path__`, which Python sets to this folder
alone and the pipeline never changes. A folder a caller appends to it explicitly (a test's
toy analyses, for the test's duration: tests/support/toy_analysis.py) is scanned too, its
packages import as `pipeline.analyses.<name>`, and their groups' values lie in its own
`conf/<group>/`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError

HERE = Path(__file__).parent


def roots() -> tuple[Path, ...]:
    """The folders of analysis packages: those of this package's `__path__`, in its order."""
    return tuple(Path(entry) for entry in __path__)


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
            f"analysis package {twice[0]} is in more than one folder of "
            f"{__name__}.__path__; rename one of them"
        )
    return sorted(found)


def folder(name: str) -> Path:
    """The folder of analysis package `name`."""
    return next(root / name for root in roots() if (root / name).is_dir())


def conf_dir(name: str) -> Path:
    """The conf/ folder that holds the values of analysis `name`'s config group: the
    project's, or that of the other folder of `__path__` it lies in."""
    root = folder(name).parent
    return CONF_DIR if root == HERE else root / "conf"


def part(name: str, module: str) -> ModuleType | None:
    """Module `module` (e.g. "claims", "results") of analysis `name`, or None where the
    analysis has none."""
    if not (folder(name) / f"{module}.py").exists():
        return None
    return importlib.import_module(f"{__name__}.{name}.{module}")
