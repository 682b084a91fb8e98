"""The analyses: one package per analysis, found by scanning this folder.

`pipeline/analyses/<name>/` holds everything one analysis declares: its settings, the stage
that runs it, its report section, the results it writes (typed), and the claims that read
them. Nothing lists the packages; `names()` finds them, and the generated files (dvc.yaml,
params.yaml, the config's defaults list, the report's sections, the claims table) are built
from what they declare.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent


def names(root: Path = HERE) -> list[str]:
    """The analysis packages under `root`, by name: every sub-folder whose name is an
    identifier and that holds Python files."""
    return sorted(
        folder.name
        for folder in root.iterdir()
        if folder.is_dir() and folder.name.isidentifier() and any(folder.glob("*.py"))
    )


def part(name: str, module: str) -> ModuleType | None:
    """Module `module` (e.g. "claims", "results") of analysis `name`, or None where the
    analysis has none."""
    if not (HERE / name / f"{module}.py").exists():
        return None
    return importlib.import_module(f"{__name__}.{name}.{module}")
