"""dvc.yaml is generated from the stage declarations, its code deps are exactly the project
files each stage imports, and dvc.lock holds only its stages.

Each stage's `cmd` names its module (`python -m stages.<name>`); its imports are walked
transitively (pipeline/dag/imports.py: every `import`/`from ... import` of the project, at
any depth, with the `__init__.py` of each package on the way; a file that holds only a
docstring is left out). A stage whose deps miss an imported file, or name a project file it
does not import, fails naming the stage and the file. Per-task stages must also depend on
their task's config file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from pipeline.dag import declarations
from pipeline.dag.dvc_yaml import dvc_yaml_path, render, stages_depending_on, upstream_path
from pipeline.dag.imports import REPO, code_deps, imported_modules, runtime_imports
from pipeline.dag.stage_types import Upstream
from tests.support.dag_stages import A_SEED, A_TASK, code_in_deps, dvc_stages, stage_module


def deps_against_imports(spec: dict) -> tuple[list[str], list[str]]:
    """(files the stage imports that its deps miss, code deps it does not import)."""
    imported, declared = set(code_deps(stage_module(spec))), code_in_deps(spec)
    return sorted(imported - declared), sorted(declared - imported)


STAGES = dvc_stages(dvc_yaml_path().read_text())


def test_dvc_yaml_is_generated_from_the_declarations() -> None:
    """After editing a declaration or an import: `python -m pipeline.dag.dvc_yaml`."""
    assert dvc_yaml_path().read_text() == render(), (
        "dvc.yaml is stale; regenerate it with `python -m pipeline.dag.dvc_yaml`"
    )


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_code_deps_are_exactly_the_imported_files(stage: str) -> None:
    missing, unimported = deps_against_imports(STAGES[stage])
    assert not missing, f"dvc.yaml stage {stage} imports files its deps miss: {missing}"
    assert not unimported, f"dvc.yaml stage {stage} declares files it never imports: {unimported}"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_code_deps_are_files_that_exist(stage: str) -> None:
    for dep in code_in_deps(STAGES[stage]):
        assert (REPO / dep).is_file(), f"dvc.yaml stage {stage}: code dep {dep} is not a file"


@pytest.mark.parametrize("stage", sorted(s for s in STAGES if STAGES[s]["per_task"]))
def test_per_task_stages_depend_on_their_task_config(stage: str) -> None:
    assert f"conf/task/{A_TASK}.yaml" in STAGES[stage]["deps"]


def test_an_edit_of_the_statistics_leaves_fine_tuning_up_to_date() -> None:
    finetune = STAGES[f"finetune@{A_TASK}-{A_SEED}"]
    assert "pipeline/core/stats.py" not in finetune["deps"]
    assert "pipeline/core/stats.py" in STAGES[f"ablate@{A_TASK}-{A_SEED}"]["deps"]


def test_the_docs_say_which_stages_an_edit_of_each_core_file_reruns() -> None:
    """The last column of the table in docs/adding-an-analysis.md, "What an edit reruns"."""
    doc = (REPO / "docs" / "adding-an-analysis.md").read_text()
    rows = dict(re.findall(r"^\| `(pipeline/core/[^`]+)` \| [^|]+ \| ([^|]+) \|$", doc, re.M))
    core = REPO / "pipeline" / "core"
    assert set(rows) == {str(p.relative_to(REPO)) for p in core.rglob("*.py")}
    text = dvc_yaml_path().read_text()
    total = len(yaml.safe_load(text)["stages"])
    for path, shown in rows.items():
        names = stages_depending_on(text, path)
        listed = ", ".join(f"`{n}`" for n in names) or "none"
        expected = "every stage" if len(names) == total else listed
        assert shown.strip() == expected, path


def test_every_stage_module_has_a_stage() -> None:
    modules = {stage_module(spec) for spec in STAGES.values()}
    runnable = {
        f"stages.{p.stem}"
        for p in (REPO / "stages").glob("*.py")
        if "stage_main(" in p.read_text(encoding="utf-8")
    }
    interactive = {"tools.annotate", "tools.patterns_sample"}  # run by hand, not by DVC
    assert runnable - interactive == modules


def test_the_check_names_a_missing_and_an_unimported_file() -> None:
    spec = {
        "cmd": "python -m stages.ablate --dvc sst2",
        "deps": ["stages/ablate.py", "pipeline/clark/ud.py"],
    }
    missing, unimported = deps_against_imports(spec)
    assert "pipeline/core/stage.py" in missing and "pipeline/data/batching.py" in missing
    assert "stages/ablate.py" not in missing
    assert unimported == ["pipeline/clark/ud.py"]


def test_imports_inside_functions_and_relative_imports_are_followed() -> None:
    tree = ast.parse(
        "def f():\n    from pipeline.core import head_names\n    from .batching import x\n"
    )
    assert {"pipeline.core.head_names", "pipeline.data.batching"} <= imported_modules(
        tree, "pipeline.data"
    )


def test_imports_made_only_for_type_checking_are_not_deps() -> None:
    tree = ast.parse(
        "if TYPE_CHECKING:\n    from pipeline.core import head_names\n"
        "else:\n    import pipeline.data.glue\n"
    )
    found = runtime_imports(tree, "pipeline")
    assert "pipeline.data.glue" in found and "pipeline.core.head_names" not in found


def test_a_reader_depends_on_the_runs_of_its_writer_that_it_covers() -> None:
    up = Upstream
    claims, gates, table1 = map(declarations.stage, ("claims", "gates", "table1"))
    assert upstream_path(gates, up("ablate", "plots")) == (
        "outputs/plots/ablate/${item.task}/seed${item.seed}"
    )
    assert upstream_path(table1, up("finetune", "plots", "predictions.csv")) == (
        "outputs/plots/finetune"
    )
    assert upstream_path(claims, up("ablate", "metrics")) == "outputs/metrics/ablate"
    assert upstream_path(claims, up("clark_syntax", "metrics")) == (
        "outputs/metrics/clark_syntax/ud.json"
    )


def lock_stages(path: Path) -> set[str]:
    """The stages dvc.lock records (none before the first run)."""
    return (
        set((yaml.safe_load(path.read_text()) or {}).get("stages", {})) if path.exists() else set()
    )


def dvc_yaml_stage_names() -> set[str]:
    """Every stage of dvc.yaml, matrix stages expanded by DVC itself for params.yaml."""
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        return {stage.addressing for stage in repo.index.stages}


def test_dvc_lock_holds_only_stages_of_dvc_yaml() -> None:
    locked = lock_stages(REPO / "dvc.lock")
    stale = locked - dvc_yaml_stage_names() if locked else set()
    assert not stale, f"dvc.lock holds stages dvc.yaml no longer has: {sorted(stale)}"
