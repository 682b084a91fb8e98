"""A stage types, and depends on the settings of, only its own config groups and its upstream
stages' (stage_groups.yaml, pipeline/dag/stage_groups.py; pipeline/core/stage_schema.py), so
an edit of one analysis's settings.py reruns only the stages that read its group and those
downstream of them."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pipeline.analyses import catalog
from pipeline.analyses.group_scan import owners
from pipeline.core import config_schema, stage_schema  # noqa: F401  (the whole schema, registered)
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.overrides import check_overrides
from pipeline.dag.declarations import STAGES
from pipeline.dag.dvc_yaml import dvc_yaml_path, stages_depending_on
from pipeline.dag.imports import REPO
from pipeline.dag.stage_groups import render, stage_groups_path

DVC_YAML = dvc_yaml_path().read_text(encoding="utf-8")
BY_NAME = {declared.name: declared for declared in STAGES}


def downstream(names: set[str]) -> set[str]:
    """`names` and every stage that reads their outputs, directly or not; not through a stage
    that is always changed (data_sources, model_identity), whose record no setting makes."""
    found = set(names)
    for declared in STAGES:  # each after the stages it reads
        upstream = {name for name in found if not BY_NAME[name].always_changed}
        if catalog.upstream(declared, BY_NAME) & upstream:
            found.add(declared.name)
    return found


def readers(group: str) -> set[str]:
    """The stages whose params name config group `group`, or that read the whole config: its
    params (the report), or conf/ itself (the claims stage, which composes every profile for
    the registry's digest)."""
    return {
        d.name
        for d in STAGES
        if d.whole_config or "conf" in d.inputs or group in {k.split(".")[0] for k in d.params}
    }


def test_stage_groups_yaml_is_generated() -> None:
    """After a declaration or a group changes: `python -m pipeline.dag.dvc_yaml`."""
    assert stage_groups_path().read_text(encoding="utf-8") == render(), (
        "stage_groups.yaml is stale; regenerate it with `python -m pipeline.dag.dvc_yaml`"
    )


@pytest.mark.parametrize("group", list(owners()))
def test_an_edit_of_a_settings_file_reruns_its_readers_and_their_downstream_alone(
    group: str,
) -> None:
    settings = f"pipeline/analyses/{owners()[group]}/settings.py"
    changed = set(stages_depending_on(DVC_YAML, settings))
    allowed = downstream(readers(group))
    assert readers(group) <= changed, f"{settings}: a stage that reads `{group}` misses it"
    assert changed <= allowed, (
        f"{settings} reruns stages that neither read `{group}` nor lie downstream of one "
        f"that does (a module importing its dataclass for a type only imports it under "
        f"`if TYPE_CHECKING:`): {sorted(changed - allowed)}"
    )


def test_an_edit_of_an_analysis_settings_leaves_fine_tuning_up_to_date() -> None:
    """The case that cost a fine-tuning run: a field added to the ablation's settings."""
    changed = stages_depending_on(DVC_YAML, "pipeline/analyses/ablate/settings.py")
    assert "finetune" not in changed and "prepare" not in changed
    assert {"ablate", "gates"} <= set(changed)


def test_dvc_status_after_an_edit_of_one_settings_file_marks_only_its_readers_and_downstream(
    tmp_path: Path,
) -> None:
    """What the deps above promise, asked of DVC itself: in a clone of the project (with the
    checkout's uncommitted edits), a comment added to the ablation's settings.py changes the
    deps of the stages that read `ablate` and those downstream of them, and of no other."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    edits = subprocess.run(
        ["git", "diff", "HEAD", "--binary"], cwd=REPO, capture_output=True, check=True
    ).stdout
    if edits:
        subprocess.run(["git", "apply", "-"], cwd=clone, input=edits, check=True)
    settings = "pipeline/analyses/ablate/settings.py"
    with (clone / settings).open("a", encoding="utf-8") as edited:
        edited.write("# an edit that changes no setting\n")
    status = subprocess.run(
        [sys.executable, "-m", "dvc", "status", "--json"],
        cwd=clone, capture_output=True, text=True, check=True,
    )  # fmt: skip
    changed = {
        stage.split("@")[0]
        for stage, changes in json.loads(status.stdout).items()
        for change in changes
        if isinstance(change, dict) and settings in change.get("changed deps", {})
    }
    assert changed == downstream(readers("ablate")) - {"data_sources", "model_identity"}
    assert "finetune" not in changed and "ablate" in changed


RUN_IMPORTS = """
import sys
from pathlib import Path
from omegaconf import OmegaConf
from pipeline.core import stage_schema
from pipeline.core.stage import StageRun
with stage_schema.using(stage_schema.for_stage(sys.argv[1])):
    StageRun(OmegaConf.load("params.yaml"), out_root=Path("outputs"), under_dvc=True)
print(*sorted(m for m in sys.modules if m.endswith(".settings")))
"""


@pytest.mark.parametrize("stage", ["finetune", "gates"])
def test_a_stage_typing_its_config_imports_no_settings_outside_its_deps(stage: str) -> None:
    """What the stage imports when it types params.yaml, not what the import walk says."""
    ran = subprocess.run(
        [sys.executable, "-c", RUN_IMPORTS, stage],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    imported = {f"{m.replace('.', '/')}.py" for m in ran.stdout.split()}
    deps = set(yaml.safe_load(DVC_YAML)["stages"][stage]["deps"])
    assert imported and imported <= deps, sorted(imported - deps)
    assert "pipeline/analyses/clark_syntax/settings.py" not in imported


def test_a_stage_types_its_own_groups_and_leaves_the_others_untyped() -> None:
    before = stage_schema.registered()
    schema = stage_schema.for_stage("finetune")
    with stage_schema.using(schema):
        assert stage_schema.registered() is schema
        with pytest.raises(PipelineError, match=r"did you mean `finetune\.epochs`"):
            check_overrides(["finetune.epoch=3"])
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=["task=rte", "gates.steps=2"])
    assert stage_schema.registered() is before  # restored after the stage's run
    assert OmegaConf.get_type(cfg.finetune).__name__ == "FinetuneConfig"
    assert OmegaConf.get_type(cfg.gates) is dict and cfg.gates.steps == 2  # untyped, kept
    assert stage_schema.typed_groups("finetune") == ["finetune", "prepare"]


def test_a_stages_schema_reaches_a_launchers_worker_by_reference() -> None:
    """A parallel sweep's worker process unpickles the schema its job composed with."""
    schema = stage_schema.for_stage("gates")
    pickled = pickle.dumps(schema)
    assert b"Config_gates" in pickled and len(pickled) < 200  # a name, not the class's body
    assert pickle.loads(pickled) is schema
