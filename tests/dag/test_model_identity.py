"""The model's identity record (stages/model_identity.py) in the generated dvc.yaml: every
stage that loads the model depends on it, and it is rewritten on every `dvc repro` (kept in
git), so new weights under the same `model.name_or_path` rerun exactly those stages."""

from __future__ import annotations

from functools import cache

import yaml

from pipeline.dag.dvc_yaml import render
from pipeline.dag.stage_types import MODEL_IDENTITY


@cache
def generated() -> dict[str, dict]:
    """dvc.yaml as the declarations render it (once: each test reads it many times)."""
    return yaml.safe_load(render())["stages"]


def test_every_stage_that_loads_the_model_depends_on_its_identity() -> None:
    loaders = {name for name, spec in generated().items() if "model" in spec.get("params", [])}
    loaders.discard("model_identity")
    assert {"finetune", "dump_attention", "clark_syntax"} <= loaders
    missing = {name for name in loaders if MODEL_IDENTITY not in generated()[name]["deps"]}
    assert missing == set()


def test_only_the_stages_that_load_the_model_depend_on_its_identity() -> None:
    readers = {name for name, spec in generated().items() if MODEL_IDENTITY in spec["deps"]}
    assert "patterns_train" not in readers  # reads `model.name` alone, never the weights
    assert all("model" in generated()[name]["params"] for name in readers)


def test_the_identity_is_written_on_every_repro_and_kept_in_git() -> None:
    spec = generated()["model_identity"]
    assert spec["always_changed"] is True
    assert spec["outs"] == [{MODEL_IDENTITY: {"cache": False}}]
