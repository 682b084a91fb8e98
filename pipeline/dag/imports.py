"""The project files a module runs when imported: every `import` and `from ... import` of the
project, at any depth of a file (inside functions too; not those under `if TYPE_CHECKING:`,
which never run), followed transitively, with the `__init__.py` of each package on the way.
A call `part(name, "<module>")` (pipeline/analyses/__init__.py) imports that module of every
analysis package, as the scan that makes it does. A stage's run also imports, by name, the
settings modules of the config groups its composition types (pipeline/core/stage_schema.py,
from stage_groups.yaml): `code_deps` of a stage's module adds them and what they import.
dvc.yaml's code deps are these files (pipeline/dag/dvc_yaml.py); the floors test reads the
same imports."""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pipeline.analyses import names
from pipeline.core.stage_schema import settings_module, typed_groups

REPO = Path(__file__).resolve().parents[2]
PROJECT_PACKAGES = ("pipeline", "stages")


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
        elif scanned := scanned_part(node):
            found.update(f"pipeline.analyses.{name}.{scanned}" for name in names())
    return found


def scanned_part(node: ast.AST) -> str | None:
    """The module `m` that a call `part(name, "m")` (or `analyses.part(name, "m")`) imports
    from every analysis package."""
    if not isinstance(node, ast.Call) or len(node.args) != 2:
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    module = node.args[1]
    if called == "part" and isinstance(module, ast.Constant) and isinstance(module.value, str):
        return module.value
    return None


class _DropTypeCheckingBlocks(ast.NodeTransformer):
    """Replaces each `if TYPE_CHECKING:` block by its `else` branch (the code that runs)."""

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        if "TYPE_CHECKING" in ast.unparse(node.test):
            return node.orelse
        return self.generic_visit(node)


def runtime_imports(tree: ast.Module, package: str) -> set[str]:
    """`imported_modules` of `tree` without the imports made only for type checking."""
    return imported_modules(_DropTypeCheckingBlocks().visit(tree), package)


def only_a_docstring(path: Path) -> bool:
    """A file that holds nothing but its docstring cannot change what a stage computes."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return len(body) <= 1 and all(isinstance(n, ast.Expr) for n in body)


@cache
def project_closure(
    module: str, imports: Callable[[ast.Module, str], set[str]] = runtime_imports
) -> frozenset[Path]:
    """The project files that importing `module` runs, transitively (`imports`: the modules
    one file's tree imports, given its package)."""
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
        pending.extend(imports(tree, package_of(path)))
    return frozenset(seen)


def code_deps(module: str) -> list[str]:
    """The repo-relative project files `module` imports, transitively, that hold code (a
    docstring-only file is left out), sorted; for a stage's module (`stages.<name>`), with
    the settings of the groups its composition types."""
    closure = set(project_closure(module))
    if module.startswith("stages."):
        for group in typed_groups(module.removeprefix("stages.")):
            closure |= project_closure(settings_module(group))
    return sorted(str(p.relative_to(REPO)) for p in closure if not only_a_docstring(p))
