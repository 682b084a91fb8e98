"""The tests' own layout: a folder per package of pipeline/ (plus stages/, tools/, benchmarks/,
project/ and support/), no test module imported by another module of tests/ (what tests share
lives in tests/support/), and no file of tests/ over 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO

MAX_LINES = 600
NOT_PACKAGES = {"stages", "tools", "benchmarks", "project", "support"}  # folders of tests/


def modules_of_tests(tests: Path) -> set[str]:
    """Dotted names of the test modules under `tests` (tests.clark.test_gap, ...)."""
    root = tests.parent
    return {".".join(p.relative_to(root).with_suffix("").parts) for p in tests.rglob("test_*.py")}


def imported_names(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of each module, or module attribute, that `path` imports, relative
    imports resolved against its package; at any depth, not only at the top."""
    package = path.relative_to(root).parent.parts
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def imports_of_test_modules(tests: Path) -> list[str]:
    """`file:line imports module` for every import of a test module by a module of `tests`,
    by its dotted name or, as pytest's rootdir import mode would allow, by its bare name."""
    modules = modules_of_tests(tests)
    bare = {name.rpartition(".")[2] for name in modules}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for line, name in imported_names(path, tests.parent):
            if name in modules or name.partition(".")[0] in bare:
                found.append(f"{path.relative_to(tests.parent)}:{line} imports {name}")
    return found


def long_files(tests: Path) -> list[str]:
    """`file: N lines` for every Python file of `tests` over MAX_LINES lines."""
    counts = {p: len(p.read_text().splitlines()) for p in sorted(tests.rglob("*.py"))}
    return [f"{p.relative_to(tests.parent)}: {n} lines" for p, n in counts.items() if n > MAX_LINES]


def unmirrored_folders(tests: Path, pipeline: Path) -> list[str]:
    """Folders of `tests` that neither name a package of `pipeline` (kovaleva/patterns for
    pipeline/kovaleva/patterns) nor are one of NOT_PACKAGES, or that are not packages."""
    found = []
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        relative = folder.relative_to(tests)
        if relative.parts[0] == "support":
            continue
        if not (folder / "__init__.py").is_file():
            found.append(f"{relative}: no __init__.py")
        elif relative.parts[0] not in NOT_PACKAGES and not (pipeline / relative).is_dir():
            found.append(f"{relative}: no pipeline/{relative}")
    return found


def test_no_test_module_imports_another():
    found = imports_of_test_modules(REPO / "tests")
    assert not found, "move what is shared to tests/support/: " + "; ".join(found)


def test_no_file_of_tests_is_over_600_lines():
    found = long_files(REPO / "tests")
    assert not found, f"split these by the module they test: {'; '.join(found)}"


def test_every_folder_of_tests_mirrors_a_package():
    found = unmirrored_folders(REPO / "tests", REPO / "pipeline")
    assert not found, "; ".join(found)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_checks_tell_present_from_absent(tmp_path):
    tests = tmp_path / "tests"
    write(tests / "__init__.py", "")
    write(tests / "support" / "shared.py", "X = 1\n")
    write(tests / "core" / "__init__.py", "")
    write(tests / "core" / "test_a.py", "from tests.support.shared import X\n")
    write(tests / "core" / "test_b.py", "def test_b():\n    from . import test_a\n")
    write(tests / "core" / "test_c.py", "from tests.core.test_a import X\n")
    write(tests / "core" / "test_d.py", "import test_a\n" + "\n" * MAX_LINES)
    write(tests / "nowhere" / "__init__.py", "")
    write(tests / "project" / "test_e.py", "X = 1\n" * MAX_LINES)
    (tmp_path / "pipeline" / "core").mkdir(parents=True)

    assert imports_of_test_modules(tests) == [
        "tests/core/test_b.py:2 imports tests.core.test_a",
        "tests/core/test_c.py:1 imports tests.core.test_a",
        "tests/core/test_d.py:1 imports test_a",
    ]
    assert long_files(tests) == [f"tests/core/test_d.py: {MAX_LINES + 1} lines"]
    assert unmirrored_folders(tests, tmp_path / "pipeline") == [
        "nowhere: no pipeline/nowhere",
        "project: no __init__.py",
    ]
