"""No import points up a floor: each package of `pipeline/` imports only packages on lower
floors (and itself). An edit then invalidates only what stands on it (dvc.yaml's deps follow
the imports, `pipeline/dag/imports.py`).

`pipeline/analyses/` spans floors: each module there stands on the floor of the package whose
job it does (`AS_PACKAGE`). The scan and the config groups' schemas (each analysis's
`settings.py`) are part of the config schema, so `core`'s; the declarations and the catalog
that collects them are part of the DAG, so `dag`'s; the typed results a stage writes
(`results.py`) stand on `core`'s floor, where any reader can import them; the claims that
read them (`claims.py`) on `claims`'. That is the one rule for the analyses' floors.

The framework (`FRAMEWORK`) serves every analysis and names none: it finds them by the scan
(`pipeline.analyses.names`, `part`, the catalog), never by an import of one, static or by a
string. And an analysis's claims and declaration are its own: no module outside its package
imports them (the scan collects them)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pipeline.analyses import names
from pipeline.dag.imports import REPO, imported_modules, module_file, package_of

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


# the package whose floor a module of pipeline/analyses/ stands on: by its name there, or, in
# an analysis package (pipeline/analyses/<name>/), by its part's name
AS_PACKAGE: dict[str, str] = {
    "pipeline.analyses": "core",  # the scan (names, part), and each package's docstring
    "pipeline.analyses.groups": "core",  # the config groups, which the composed schema reads
    "settings": "core",  # an analysis's group schema
    "pipeline.analyses.analysis": "dag",
    "pipeline.analyses.catalog": "dag",
    "pipeline.analyses.defaults_list": "dag",
    "declaration": "dag",  # an analysis's stage and report section
    "results": "core",  # the typed results its stage writes, which readers of them import
    "claims": "claims",  # the claims that read them
    "blocks": "claims",  # the docs' blocks made from them (pipeline/claims/prose.py)
}


def pipeline_package(module: str) -> str | None:
    """The package whose floor `module` stands on: `pipeline.<package>...` -> package (a
    module of pipeline/analyses/ as `AS_PACKAGE` says: by its part's name in an analysis
    package, else by the nearest module above it that it names); None outside pipeline/."""
    parts = module.split(".")
    if parts[0] != "pipeline" or len(parts) < 2:
        return None
    if parts[1] != "analyses":
        return parts[1]
    by_part = [AS_PACKAGE.get(part) for part in reversed(parts[3:])]
    by_module = [AS_PACKAGE.get(".".join(parts[:end])) for end in range(len(parts), 1, -1)]
    return next(found for found in [*by_part, *by_module] if found)


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def upward_imports(package: str) -> list[str]:
    """'file -> module' for every import of `package`'s files that points up a floor or
    sideways into another package of its floor."""
    found = []
    files = [p for p in sorted((REPO / "pipeline").rglob("*.py")) if p.parent.name != "__pycache__"]
    for path in (p for p in files if pipeline_package(module_of(p)) == package):
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
    assert packages - {"analyses"} == set(FLOORS)


@pytest.mark.parametrize("package", list(FLOORS))
def test_no_import_points_up_a_floor(package: str) -> None:
    assert upward_imports(package) == []


SHARED_NAMES = {"__init__.py", "__main__.py", "figures.py"}  # one figures.py per package
# of every analysis package, by their job
ANALYSIS_PARTS = {"settings.py", "declaration.py", "results.py", "claims.py", "blocks.py"}


def test_no_two_modules_share_a_name() -> None:
    """A module's name says its job, so two modules of different jobs never share one; only
    a package's `figures.py` (its figures), an analysis package's parts and the package files
    repeat."""
    by_name: dict[str, list[str]] = {}
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        part = path.parent.parent.name == "analyses" and path.name in ANALYSIS_PARTS
        if path.name not in SHARED_NAMES and not part:
            by_name.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}


FRAMEWORK = ("claims", "core", "dag", "report", "scale")  # serve every analysis, name none
OWN_PARTS = ("claims", "declaration")  # an analysis's parts that only the scan collects
NAMED = re.compile(r"pipeline\.analyses\.\w+(?:\.\w+)?")  # in a string


def named_analysis_modules(tree: ast.Module, package: str) -> set[str]:
    """The modules of analysis packages `tree` names: by an import statement (not the scan's
    `part` calls), or in a string (what a string import would load); modules, not the names
    imported from them."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= imported_modules(ast.Module([node], []), package)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= set(NAMED.findall(node.value))
    analyses = set(names())
    named = {m for m in found if m.split(".")[2:3] and m.split(".")[2] in analyses}
    return {m for m in named if module_file(m) is not None}


def named_imports() -> list[str]:
    """'file -> module' for each module of an analysis package that a framework module names,
    and each analysis's claims or declaration named outside its own package."""
    found = []
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        module = module_of(path)
        tree = ast.parse(path.read_text(), filename=str(path))
        framework = module.split(".")[1:2] in [[p] for p in FRAMEWORK]
        for named in sorted(named_analysis_modules(tree, package_of(path))):
            analysis, part = named.split(".")[2], named.split(".")[3:4]
            own = module.startswith(f"pipeline.analyses.{analysis}.")
            if framework or (part and part[0] in OWN_PARTS and not own):
                found.append(f"{path.relative_to(REPO)} -> {named}")
    return found


def test_no_framework_module_names_an_analysis() -> None:
    assert named_imports() == []
