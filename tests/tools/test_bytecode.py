"""tools.bytecode compiles what pip would, leaves test suites out, goes on past a
module this Python cannot compile, and the README's installs run it after `--no-compile`."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from tests.support.paths import REPO
from tools.bytecode import Compiled, compile_modules


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def bytecode_of(module: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(module)))


def test_modules_compile_on_workers_except_tests_and_unparsable_ones(tmp_path) -> None:
    good = write(tmp_path / "pkg" / "good.py", "VALUE = 1\n")
    nested = write(tmp_path / "pkg" / "sub" / "nested.py", "def f():\n    return 2\n")
    broken = write(tmp_path / "pkg" / "broken.py", "def f(:\n")
    suite = write(tmp_path / "pkg" / "tests" / "test_it.py", "X = 3\n")
    other = write(tmp_path / "other" / "test" / "test_too.py", "Y = 4\n")

    assert compile_modules([tmp_path / "pkg", tmp_path / "other"], workers=2) == Compiled(3, 1)
    assert bytecode_of(good).exists() and bytecode_of(nested).exists()
    assert not bytecode_of(broken).exists()
    assert not bytecode_of(suite).exists() and not bytecode_of(other).exists()

    written = bytecode_of(good).stat().st_mtime_ns
    os.utime(bytecode_of(good), ns=(written - 10**9, written - 10**9))
    compile_modules([tmp_path / "pkg"], workers=1)  # up to date: left as it is
    assert bytecode_of(good).stat().st_mtime_ns == written - 10**9


def test_the_readme_installs_without_pip_compiling_then_compiles_on_every_core() -> None:
    readme = (REPO / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("python -m venv")]
    assert len(commands) == 2
    for command in commands:
        steps = [step.strip() for step in command.split("&&")]
        installs = [i for i, step in enumerate(steps) if step.startswith("pip install")]
        assert all("--no-compile" in steps[i] for i in installs), command
        assert steps.index("python -m tools.bytecode") == installs[-1] + 1, command
        assert re.fullmatch(r"(dvc repro|pytest)", steps[-1]), command
