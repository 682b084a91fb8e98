"""What a Hydra job's inputs are made by comes from the stage declarations
(pipeline/dag/stage_inputs.py, generated into stage_inputs.yaml): the stages upstream of a
producer, and what it makes, where, in its declaration's words. No stage is named by the
runner (pipeline/core/stage.py), where its inputs lie (pipeline/core/job_inputs.py) or their
key (pipeline/core/input_keys.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from pipeline.core import input_keys, layout
from pipeline.dag.declarations import STAGES
from pipeline.dag.stage_inputs import render, stage_inputs_path
from pipeline.dag.stage_types import DATA, OUTPUTS, SEED, TASK, Per, Stage
from tests.support.paths import REPO


def test_stage_inputs_yaml_is_generated_from_the_declarations() -> None:
    assert stage_inputs_path().read_text(encoding="utf-8") == render(), (
        "stage_inputs.yaml is stale; regenerate it with `python -m pipeline.dag.dvc_yaml`"
    )


def test_what_a_stage_makes_is_its_declaration() -> None:
    """Each declared producer's input lies where the stages that read it look for it."""
    root, makers = Path("root"), {s.name: s.makes for s in STAGES if s.makes}
    assert {name: input_keys.made(name).what for name in makers} == makers
    model = input_keys.made(input_keys.producer_of(OUTPUTS, "models"))
    assert model.of(root, "rte", 43) == layout.model(root, "rte", 43)
    store = input_keys.made(input_keys.producer_of(OUTPUTS, "attention"))
    assert store.of(root, "rte", 43) == layout.attention_store(root / "attention", "rte", 43)
    glue = input_keys.made(input_keys.producer_of(DATA, "glue"))
    assert glue.of(root, "rte", 43) == root / "glue" / "rte"  # one folder per task of `tasks`
    assert input_keys.producer_of(OUTPUTS, "plots") is None  # results: no stage's input


def test_a_producer_reads_the_stages_upstream_of_it_first() -> None:
    store = input_keys.producer_of(OUTPUTS, "attention")
    model = input_keys.producer_of(OUTPUTS, "models")
    glue = input_keys.producer_of(DATA, "glue")
    assert input_keys.chain(store) == (glue, model, store)


def test_a_new_producer_is_declared_not_named(monkeypatch) -> None:
    """A stage that declares what it `makes` is a producer of the runner with no other edit."""
    from pipeline.dag import stage_inputs

    toy = Stage(
        "toy",
        Per.TASK_SEED,
        ("toy",),
        outs=(f"{OUTPUTS}/toys/{TASK}/seed{SEED}.bin",),
        inputs=(f"{DATA}/glue/{TASK}",),
        makes="toy table",
    )
    after = [s.name for s in STAGES].index(input_keys.producer_of(DATA, "glue")) + 1
    monkeypatch.setattr(stage_inputs, "STAGES", (*STAGES[:after], toy, *STAGES[after:]))
    entry = stage_inputs.entries()["toy"]
    assert entry["makes"] == {
        "what": "toy table",
        "under": OUTPUTS,
        "path": "toys/{task}/seed{seed}.bin",
    }
    assert entry["upstream"] == [input_keys.producer_of(DATA, "glue")]
    assert entry["per_task"] and entry["reads_tasks"]


def test_the_runner_names_no_stage() -> None:
    """No string literal of the runner or the inputs' key is a declared stage's name."""
    names = {s.name for s in STAGES}
    for module in ("stage.py", "job_inputs.py", "input_keys.py"):
        tree = ast.parse((REPO / "pipeline" / "core" / module).read_text(encoding="utf-8"))
        strings = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        assert not names & set(strings), f"pipeline/core/{module} names {names & set(strings)}"
