"""No import points up a floor: each package of `pipeline/` imports only packages on lower
floors (and itself). An edit then invalidates only what stands on it (dvc.yaml's deps follow
the imports, `pipeline/dag/imports.py`)."""

from __future__ import annotations

import ast

import pytest

from pipeline.dag.imports import REPO, imported_modules, package_of

FLOORS: dict[str, int] = {
    "core": 1,  # schema, stage wiring, statistics, I/O
    "plotting": 1,  # the figures library of every package that draws
    "data": 2,
    "dag": 2,  # the stage declarations and dvc.yaml generation
    "scale": 2,
    "models": 3,
    "attention": 4,
    "ablation": 5,  # disabling sweeps: Kovaleva Figs. 8-9, Michel et al.'s importance and pruning
    "clark": 5,
    "extensions": 5,  # the project's own analyses: norms and rollout, the cross-seed comparison
    "kovaleva": 5,
    "voita": 6,  # the gates, set beside the ablation package's pruning curve
    "claims": 7,
    "report": 8,  # the HTML page: opens with the claims' verdicts counted by paper
}


def pipeline_package(module: str) -> str | None:
    """`pipeline.<package>...` -> package; None for a module outside pipeline/."""
    parts = module.split(".")
    return parts[1] if parts[0] == "pipeline" and len(parts) > 1 else None


def upward_imports(package: str) -> list[str]:
    """'file -> module' for every import of `package`'s files that points up a floor or
    sideways into another package of its floor."""
    found = []
    for path in sorted((REPO / "pipeline" / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for module in sorted(imported_modules(tree, package_of(path))):
            target = pipeline_package(module)
            if target is None or target == package or target not in FLOORS:
                continue
            if FLOORS[target] >= FLOORS[package]:
                found.append(f"{path.relative_to(REPO)} -> {module}")
    return found


def test_every_package_has_a_floor() -> None:
    packages = {p.name for p in (REPO / "pipeline").iterdir() if any(p.glob("*.py"))}
    assert packages == set(FLOORS)


@pytest.mark.parametrize("package", list(FLOORS))
def test_no_import_points_up_a_floor(package: str) -> None:
    assert upward_imports(package) == []


SHARED_NAMES = {"__init__.py", "__main__.py", "figures.py"}  # one figures.py per package


def test_no_two_modules_share_a_name() -> None:
    """A module's name says its job, so two modules of different jobs never share one; only
    a package's `figures.py` (its figures) and the package files repeat."""
    by_name: dict[str, list[str]] = {}
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        if path.name not in SHARED_NAMES:
            by_name.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}
