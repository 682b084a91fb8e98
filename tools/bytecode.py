"""Bytecode for the installed packages and the project, compiled on every core.

pip compiles every module of every package it installs, one file after another. The README's
commands install with `pip install --no-compile` and then run this, which compiles the same
modules on all cores ([docs/benchmarks.md](../../docs/benchmarks.md#install) gives the
times). Left out are folders named `test` or `tests` (the packages' own test suites, which
nothing here imports). Like pip, it goes on past a module that the running Python cannot
compile (torch ships one written in Python 3.12 syntax) and says how many there were.

The project's own modules are compiled too: a process that may not write bytecode
(`PYTHONDONTWRITEBYTECODE`) otherwise compiles them again at every stage.

    python -m tools.bytecode [--workers N]
"""

from __future__ import annotations

import argparse
import compileall
import multiprocessing
import os
import sysconfig
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pipeline

SKIPPED_FOLDERS = {"test", "tests", "__pycache__"}


def modules_under(roots: Iterable[Path]) -> Iterator[Path]:
    """Every `.py` file under `roots`, outside folders named in SKIPPED_FOLDERS."""
    for root in roots:
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS)
            yield from (Path(folder, f) for f in sorted(files) if f.endswith(".py"))


@dataclass(frozen=True)
class Compiled:
    modules: int
    failed: int  # modules the running Python could not compile (a syntax error, say)


def compile_modules(roots: Iterable[Path], workers: int) -> Compiled:
    """Write the bytecode of every module under `roots` (`modules_under`), `workers`
    processes at a time; a module whose bytecode is up to date is left as it is."""
    files = [str(path) for path in modules_under(roots)]
    compile_one = partial(compileall.compile_file, quiet=2)
    spawn = multiprocessing.get_context("spawn")  # a fork of a threaded process can hang
    with ProcessPoolExecutor(workers, mp_context=spawn) as pool:
        done = list(pool.map(compile_one, files, chunksize=64))
    return Compiled(len(files), done.count(False))


def default_roots() -> list[Path]:
    """This environment's site-packages and the project's own packages."""
    installed = {Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    project = Path(pipeline.__file__).resolve().parent.parent
    return [*sorted(installed), project / "pipeline", project / "stages"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Compile the installed packages' and the project's modules to bytecode "
        "on every core (for `pip install --no-compile`)."
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    started = time.perf_counter()
    compiled = compile_modules(default_roots(), args.workers)
    print(
        f"bytecode: {compiled.modules} modules in {time.perf_counter() - started:.1f} s "
        f"on {args.workers} processes; {compiled.failed} could not be compiled by this Python"
    )


if __name__ == "__main__":
    main()
