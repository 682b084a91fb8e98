"""A stage imports only what it runs: the stages that run no model do not import torch or
transformers, and those that draw nothing do not import matplotlib or seaborn
(benchmarks/bench_startup.py measures what that saves).

Each stage module is imported in a fresh interpreter, which then lists the heavy packages it
holds; a stage that runs one of them (a model, a figure) is simply not checked for it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import REPO

MODEL = ("torch", "transformers")
PLOTTING = ("matplotlib", "seaborn")
# stage or tool module -> the heavy packages importing it must not load
MUST_NOT_LOAD = {
    "tools.annotate": MODEL + PLOTTING,
    "stages.claims": MODEL + PLOTTING,
    "stages.framenet_data": MODEL + PLOTTING,
    "stages.prepare": MODEL + PLOTTING,
    "stages.report": MODEL + PLOTTING,
    "stages.analyze": (*MODEL, "seaborn"),
    "stages.clark_heads": MODEL,
    "stages.cross_seed": (*MODEL, "seaborn"),
    "tools.patterns_sample": ("transformers", "seaborn"),  # its boundary rounds run the CNN
    "stages.table1": (*MODEL, "seaborn"),
}


def loaded_after_import(module: str, packages: tuple[str, ...]) -> list[str]:
    """Which of `packages` a fresh interpreter holds after `import module`."""
    code = (
        f"import json, sys; import {module}; "
        f"print(json.dumps([p for p in {list(packages)!r} if p in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("module", sorted(MUST_NOT_LOAD))
def test_a_stage_imports_no_heavy_package_it_does_not_run(module: str) -> None:
    loaded = loaded_after_import(module, MUST_NOT_LOAD[module])
    assert not loaded, f"importing {module} loads {loaded}, which it never runs"


def test_the_check_sees_a_heavy_import() -> None:
    assert loaded_after_import("pipeline.core.precision", MODEL) == ["torch"]
