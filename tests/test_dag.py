"""dvc.yaml cannot go stale: every project file a stage imports is one of its deps.

Each stage's `cmd` names its module (`python -m stages.<name>`); the test walks that module's
imports transitively (every `import`/`from ... import` in the project, at any depth, with the
`__init__.py` of each package on the way) and fails, naming the stage and the file, when no dep
of the stage (a file or a folder above it) covers one; a file that holds only a docstring is
exempt. Per-task stages must also depend on their task's config file.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = ("pipeline", "stages")
A_TASK = "sst2"  # foreach stages are checked with this item
A_SEED = "42"  # ... and matrix stages (task x seed) with this task and seed


def module_file(module: str) -> Path | None:
    """The project file that defines `module` (a .py file or a package's __init__.py)."""
    parts = module.split(".")
    if parts[0] not in PROJECT_PACKAGES:
        return None
    base = REPO.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def package_inits(module: str) -> list[Path]:
    """The __init__.py files Python runs before `module` (one per enclosing package)."""
    parts = module.split(".")
    inits = (REPO.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts)))
    return [init for init in inits if init.is_file()]


def package_of(path: Path) -> str:
    """The package a project file's relative imports start from."""
    module = ".".join(path.relative_to(REPO).with_suffix("").parts)
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def imported_modules(tree: ast.Module, package: str) -> set[str]:
    """Every module an import statement of `tree` names, at any depth of the file (a name
    imported from a package counts as a possible submodule)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # submodules
    return found


@cache
def project_closure(module: str) -> frozenset[Path]:
    """The project files that importing `module` runs, transitively."""
    seen: set[Path] = set()
    pending = [module]
    while pending:
        name = pending.pop()
        path = module_file(name)
        if path is None or path in seen:
            continue
        seen.add(path)
        seen.update(package_inits(name))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        pending.extend(imported_modules(tree, package_of(path)))
    return frozenset(seen)


def dvc_stages() -> dict[str, dict]:
    """Stage name -> definition, foreach and matrix stages expanded for one task (and seed)."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    expanded = {}
    for name, spec in stages.items():
        if "foreach" in spec:
            text = yaml.safe_dump(spec["do"]).replace("${item}", A_TASK)
            expanded[f"{name}@{A_TASK}"] = {**yaml.safe_load(text), "per_task": True}
        elif "matrix" in spec and "task" in spec["matrix"]:
            text = yaml.safe_dump(spec).replace("${item.task}", A_TASK)
            text = text.replace("${item.seed}", A_SEED)
            expanded[f"{name}@{A_TASK}-{A_SEED}"] = {**yaml.safe_load(text), "per_task": True}
        elif "matrix" in spec:  # per seed only
            text = yaml.safe_dump(spec).replace("${item.seed}", A_SEED)
            expanded[f"{name}@{A_SEED}"] = yaml.safe_load(text)
        else:
            expanded[name] = spec
    return expanded


def dep_paths(spec: dict) -> list[Path]:
    return [REPO / (d if isinstance(d, str) else next(iter(d))) for d in spec.get("deps", [])]


def covered(path: Path, deps: list[Path]) -> bool:
    return any(path == dep or dep in path.parents for dep in deps)


def stage_module(spec: dict) -> str:
    words = spec["cmd"].split()
    return words[words.index("-m") + 1]


def only_a_docstring(path: Path) -> bool:
    """A file that holds nothing but its docstring cannot change what a stage computes."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return len(body) <= 1 and all(isinstance(n, ast.Expr) for n in body)


def uncovered(spec: dict) -> list[str]:
    """The project files the stage's module imports that none of its deps covers."""
    deps = dep_paths(spec)
    closure = project_closure(stage_module(spec))
    return sorted(
        str(path.relative_to(REPO))
        for path in closure
        if not covered(path, deps) and not only_a_docstring(path)
    )


STAGES = dvc_stages()


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_deps_cover_every_imported_project_file(stage: str) -> None:
    missing = uncovered(STAGES[stage])
    assert not missing, f"dvc.yaml stage {stage} imports files its deps miss: {missing}"


@pytest.mark.parametrize("stage", sorted(s for s in STAGES if STAGES[s].get("per_task")))
def test_per_task_stages_depend_on_their_task_config(stage: str) -> None:
    assert REPO / "conf" / "task" / f"{A_TASK}.yaml" in dep_paths(STAGES[stage])


def test_every_stage_module_has_a_stage() -> None:
    modules = {stage_module(spec) for spec in STAGES.values()}
    runnable = {
        f"stages.{p.stem}"
        for p in (REPO / "stages").glob("*.py")
        if "stage_main(" in p.read_text(encoding="utf-8")
    }
    interactive = {"stages.annotate", "stages.patterns_sample"}  # run by hand, not by DVC
    assert runnable - interactive <= modules


def test_the_check_fails_on_a_stage_that_lists_only_its_own_module() -> None:
    spec = {"cmd": "python -m stages.ablate --dvc sst2", "deps": ["stages/ablate.py"]}
    missing = uncovered(spec)
    assert "pipeline/core/stage.py" in missing and "pipeline/data/batching.py" in missing
    assert "stages/ablate.py" not in missing


def test_imports_inside_functions_and_relative_imports_are_followed() -> None:
    tree = ast.parse("def f():\n    from pipeline.core import heads\n    from .batching import x\n")
    assert {"pipeline.core.heads", "pipeline.data.batching"} <= imported_modules(
        tree, "pipeline.data"
    )
