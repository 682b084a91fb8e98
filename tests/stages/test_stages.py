"""Every module of stages/ only wires, and adding a stage by docs/adding-an-analysis.md passes the
checks that guard the DAG.

A stage module defines its entry point and nothing else (`run` for a `stage_main` stage,
`main` for a tool run by hand), at most 40 lines long, and leaves to `StageRun` the steps it
offers: settings as schema dataclasses (`stage.settings`), the device and the fine-tuned
model's folder (`stage.device`, `stage.model_folder`), and writing tables, figures and
metrics (`stage.write_outputs`).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import REPO
from tests.support.repos import copy_project, run_ok

STAGE_MODULES = sorted(p.stem for p in (REPO / "stages").glob("*.py") if p.stem != "__init__")
MAX_LINES = 40
# names a stage module must not use, with the StageRun step that does their job
STAGE_RUN_STEPS = {
    "save_figure": "stage.write_outputs",
    "pick_device": "stage.device",
    "from_config": "stage.settings",
    "to_object": "stage.settings",
}


def thinness_problems(module: ModuleType) -> list[str]:
    """What makes a stage module more than wiring (empty when it only wires)."""
    source = inspect.getsource(module)
    entry = "run" if "stage_main(" in source else "main"
    own = [
        name
        for name, member in inspect.getmembers(module, inspect.isfunction)
        if member.__module__ == module.__name__
    ]
    problems = [f"defines {name}(); only {entry}() belongs here" for name in own if name != entry]
    if entry not in own:
        problems.append(f"has no {entry}()")
    else:
        lines = len(inspect.getsource(getattr(module, entry)).splitlines())
        if lines > MAX_LINES:
            problems.append(f"{entry}() has {lines} lines (at most {MAX_LINES})")
    problems += [
        f"defines class {name}"
        for name, member in inspect.getmembers(module, inspect.isclass)
        if member.__module__ == module.__name__
    ]
    for node in ast.walk(ast.parse(source)):
        name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
        if name in STAGE_RUN_STEPS:
            problems.append(f"uses {name}; use {STAGE_RUN_STEPS[name]}")
    return problems


@pytest.mark.parametrize("name", STAGE_MODULES)
def test_every_stage_module_only_wires(name: str) -> None:
    """A stage reads inputs, calls one entry point of its package and writes its outputs."""
    assert thinness_problems(importlib.import_module(f"stages.{name}")) == []


def test_the_thinness_check_names_what_a_fat_stage_does(tmp_path, monkeypatch) -> None:
    (tmp_path / "fat_stage.py").write_text(
        "from pipeline.core.io import save_figure\n"
        "from pipeline.core.stage import stage_main\n\n\n"
        "class Helper:\n    pass\n\n\n"
        "def draw(stage):\n    save_figure(stage.out('f.png'), None, '')\n\n\n"
        "def run(stage):\n    draw(stage)\n\n\n"
        "if __name__ == '__main__':\n    stage_main(run)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = thinness_problems(importlib.import_module("fat_stage"))
    assert problems == [
        "defines draw(); only run() belongs here",
        "defines class Helper",
        "uses save_figure; use stage.write_outputs",
    ]


# --- the recipe of docs/adding-an-analysis.md, followed for a toy analysis ---------------------

TOY_ANALYSIS = '''"""A toy analysis: the label names of a task; their count times `toy.scale`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.analyses.toy.settings import ToyConfig
from pipeline.core.schema import TaskConfig


@dataclass(frozen=True)
class Counted:
    tables: dict[str, pd.DataFrame]
    metrics: dict[str, int]


def count_labels(task: TaskConfig, settings: ToyConfig) -> Counted:
    labels = pd.DataFrame({"label": task.label_names or ["score"]})
    return Counted({"labels": labels}, {"scaled_labels": settings.scale * task.num_labels})
'''

TOY_STAGE = '''"""toy: the label names of one task (a per-(task, seed) stage)."""

from __future__ import annotations

from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.toy import count_labels


def run(stage: StageRun) -> None:
    result = count_labels(stage.task, stage.settings("toy"))
    stage.write_outputs(
        "toy", stage.task.name, stage.seed_folder, tables=result.tables, metrics=result.metrics
    )


if __name__ == "__main__":
    stage_main(run)
'''

TOY_SETTINGS = '''"""The `toy` group's schema."""

from dataclasses import dataclass

from omegaconf import MISSING

from pipeline.analyses.groups import Settings


@dataclass
class ToyConfig:
    scale: int = MISSING


SETTINGS = Settings("toy", ToyConfig)
'''

TOY_DECLARATION = '''"""The declaration of analysis toy."""

from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import Per, Stage

ANALYSIS = Analysis(
    stage=Stage("toy", Per.TASK_SEED, ("toy",)),
    section=Section("Toy: the label names of each task", 190),
)
'''

CHECKS = [
    "tests/dag/test_dag.py",
    "tests/stages/test_stages.py::test_every_stage_module_only_wires",
    "tests/core/test_config.py::test_every_config_group_is_typed",
    "tests/core/test_config.py::test_params_yaml_equals_default_composition",
    "tests/analyses/test_registry.py::test_the_defaults_list_of_conf_config_yaml_is_generated",
]


def add_toy_stage(root: Path, env: dict[str, str]) -> None:
    """The steps of docs/adding-an-analysis.md, in its order: new files, and one generated block."""
    (root / "pipeline/kovaleva/toy.py").write_text(TOY_ANALYSIS)
    package = root / "pipeline/analyses/toy"
    package.mkdir()
    (package / "__init__.py").write_text('"""toy: the label names of a task."""\n')
    (package / "settings.py").write_text(TOY_SETTINGS)
    (root / "conf/toy").mkdir()
    (root / "conf/toy/default.yaml").write_text("scale: 3\n")
    run_ok([sys.executable, "-m", "pipeline.analyses.defaults_list"], root, env)
    (root / "stages/toy.py").write_text(TOY_STAGE)
    (package / "declaration.py").write_text(TOY_DECLARATION)


@pytest.mark.slow  # 15-50 s end to end: run with `pytest -m slow` (CI, time allowing)
def test_a_stage_added_by_the_recipe_passes_the_dag_checks(tmp_path) -> None:
    root = tmp_path / "repo"
    copy_project(root)
    env = {**os.environ, "PYTHONPATH": str(root)}
    add_toy_stage(root, env)
    run_ok([sys.executable, "-m", "tools.params"], root, env)  # params.yaml
    run_ok([sys.executable, "-m", "pipeline.dag.dvc_yaml"], root, env)  # dvc.yaml
    run_ok([sys.executable, "-m", "stages.toy", "--dvc", "sst2", "--seed", "42"], root, env)
    assert (root / "outputs/plots/toy/sst2/seed42/labels.csv").read_text() == (
        "label\nnegative\npositive\n"
    )
    assert (root / "outputs/metrics/toy/sst2/seed42.json").read_text() == (
        '{\n  "scaled_labels": 6\n}\n'
    )

    assert "  - toy: default\n" in (root / "conf/config.yaml").read_text()
    shown = "from pipeline.report.html import SECTIONS; print(SECTIONS['toy'])"
    assert run_ok([sys.executable, "-c", shown], root, env) == "Toy: the label names of each task\n"

    checked = run_ok([sys.executable, "-m", "pytest", "-v", *CHECKS], root, env)
    assert "test_code_deps_are_exactly_the_imported_files[toy@sst2-42] PASSED" in checked
    assert "test_per_task_stages_depend_on_their_task_config[toy@sst2-42] PASSED" in checked
    assert "test_every_stage_module_only_wires[toy] PASSED" in checked

    dvc = root / "dvc.yaml"  # a dep left out: the DAG check names the stage and the file
    dvc.write_text(dvc.read_text().replace("      - pipeline/kovaleva/toy.py\n", "", 1))
    missed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests/dag/test_dag.py", "-k", "toy"],
        cwd=root, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert missed.returncode == 1
    assert "stage toy@sst2-42 imports files its deps miss: ['pipeline/kovaleva/toy.py']" in (
        missed.stdout
    )
