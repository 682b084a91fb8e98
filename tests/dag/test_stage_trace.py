"""What each stage really loads and reads, against its deps and params in dvc.yaml.

The static import walk (tests/dag/test_dag.py) cannot see what is loaded at run time. So every
stage of the micro profile runs here, in DVC's order, under tests/support/stage_trace.py, which
records the project files loaded and the config keys read; then, per stage:
- every project file it loaded is one of its code deps, and every code dep it did not load
  is imported only inside a function (or for type checking) on a path this run did not take;
- every key it read is one of its params (or under one), and every param was read.
`paths.outputs` and `paths.data` are exempt: they say where DVC's outs and deps lie, which
dvc.yaml fixes. A group read whole by `stage.settings(group)` is covered by params that name
some of its keys: a declaration may narrow a group to the keys the stage's code uses.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections import defaultdict

import pytest
import yaml

from pipeline.dag.imports import (
    REPO,
    imported_modules,
    only_a_docstring,
    project_closure,
)
from tests.support.dag_stages import code_in_deps, dvc_stages, stage_module
from tests.support.repos import micro_git_repo, run_ok

pytestmark = pytest.mark.slow

WHERE_OUTPUTS_LIE = ("paths.outputs", "paths.data")
PLAN = """
from dvc.repo import Repo
from pipeline.scale.plan import plan
with Repo() as repo:
    print("\\n".join(f"{s.addressing}\\t{s.cmd}" for s in plan(repo).order))
"""


def eager_imports(tree: ast.Module, package: str) -> set[str]:
    """The modules a file imports when it is loaded: imports at module level, outside
    function and class bodies and `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= imported_modules(ast.Module(body=[node], type_ignores=[]), package)
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                pending += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            pending += [*node.body, *node.orelse, *node.finalbody]
            pending += [n for handler in node.handlers for n in handler.body]
    return found


def eager_closure(module: str) -> frozenset[str]:
    """The project files importing `module` surely loads (repo-relative)."""
    return frozenset(str(p.relative_to(REPO)) for p in project_closure(module, eager_imports))


def covered_read(key: str, params: list[str]) -> bool:
    """`key` is a param, under one, or a group some params narrow."""
    return any(key == p or key.startswith(f"{p}.") or p.startswith(f"{key}.") for p in params)


def param_was_read(param: str, reads: set[str]) -> bool:
    return any(covered_read(key, [param]) for key in reads)


@pytest.fixture(scope="module")
def traced(tmp_path_factory, shared_data) -> dict[str, dict]:
    """Stage (matrix stages by name) -> its dvc.yaml definition, loaded files and reads, from
    one run of the whole micro pipeline."""
    root = tmp_path_factory.mktemp("trace") / "repo"
    env = micro_git_repo(root, shared_data, f"paths.shared_data={shared_data}")
    env.pop("DARK_SECRETS_DATA")  # so the stages read `paths.shared_data`
    env.pop("GLUE_DIR", None)
    planned = run_ok([sys.executable, "-c", PLAN], root, env)  # DVC reads dvc.yaml from cwd
    commands = [line.split("\t") for line in planned.splitlines()]
    found: dict[str, dict] = defaultdict(lambda: {"modules": set(), "reads": set()})
    for i, (name, cmd) in enumerate(commands):
        words = cmd.split()
        record = root / f"trace{i}.json"
        module_args = words[words.index("-m") + 1 :]
        run_ok(
            [sys.executable, "-m", "tests.support.stage_trace", str(record), *module_args],
            root,
            env,
        )
        seen = json.loads(record.read_text())
        family = found[name.partition("@")[0]]
        family["modules"] |= set(seen["modules"])
        family["reads"] |= set(seen["reads"])
    specs = dvc_stages((root / "dvc.yaml").read_text())
    for name, spec in specs.items():
        found[name.partition("@")[0]]["spec"] = spec
    return dict(found)


STAGE_NAMES = sorted(
    {name.partition("@")[0] for name in dvc_stages((REPO / "dvc.yaml").read_text())}
)


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_file_a_stage_loads_is_a_code_dep(traced, stage: str) -> None:
    run = traced[stage]
    deps = code_in_deps(run["spec"])
    loaded = {f for f in run["modules"] if not only_a_docstring(REPO / f)}
    assert not loaded - deps, f"{stage} loaded files its deps miss: {sorted(loaded - deps)}"
    module = stage_module(run["spec"])
    surely_loaded = eager_closure(module) & deps
    assert not surely_loaded - loaded  # the eager walk holds what a run loads
    unloaded = deps - loaded
    lazily = {f for f in unloaded if f not in eager_closure(module)}
    assert unloaded == lazily, f"{stage}: deps neither loaded nor lazily imported: {unloaded}"


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_key_a_stage_reads_is_a_param_and_every_param_is_read(traced, stage: str) -> None:
    run = traced[stage]
    params = run["spec"].get("params", [])
    reads = {
        key
        for key in run["reads"]
        if key.split(".")[0] != "task" and not key.startswith(WHERE_OUTPUTS_LIE)
    }
    if params == [{"params.yaml": None}]:  # the whole file
        assert "" in reads, f"{stage} tracks every param but does not read the whole config"
        return
    unread = [p for p in params if not param_was_read(p, reads)]
    missing = sorted(key for key in reads if not covered_read(key, params))
    assert not missing, f"{stage} reads keys its params miss: {missing}"
    assert not unread, f"{stage} declares params it never read: {unread}"


def test_the_tracer_records_a_stage_reading_a_key_it_does_not_declare(tmp_path) -> None:
    """The recording itself: a stage that reads `seed` and the `ablate` group whole."""
    (tmp_path / "params.yaml").write_text((REPO / "params.yaml").read_text())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = tmp_path / "reader.py"
    script.write_text(
        "from pipeline.core.stage import stage_main\n"
        "def run(stage):\n    stage.cfg.seed\n    stage.settings('ablate')\n"
        "stage_main(run)\n"
    )
    record = tmp_path / "trace.json"
    run_ok(
        [sys.executable, "-m", "tests.support.stage_trace", str(record), "reader", "--dvc"],
        tmp_path,
        {**env, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"},
    )
    seen = json.loads(record.read_text())
    assert {"seed", "ablate"} <= set(seen["reads"]) and "pipeline/core/stage.py" in seen["modules"]
    assert not covered_read("seed", ["ablate"]) and covered_read("ablate", ["ablate.mode"])
    assert yaml.safe_load((REPO / "params.yaml").read_text())["seed"]
