"""Bounded settings (pipeline/core/bounds.py): a value out of its bound fails when conf/ is
composed (as DVC composes params.yaml) and when a stage reads params.yaml, in one line naming
the key, the value and the fix; null, where a field takes it, and the bounds' own ends pass."""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass
from typing import get_type_hints

import pytest
from omegaconf import OmegaConf
from omegaconf.errors import InterpolationResolutionError

from pipeline.core.bounds import _held, check_bounds
from pipeline.core.config_schema import Config
from pipeline.core.errors import PipelineError
from pipeline.core.run_config import load_dvc_config as _load_dvc_config
from tests.support.builders import composed
from tools.params import compose_params


def _refusal(override: str) -> str:
    """The project's one-line refusal of composing conf/ with `override`."""
    with pytest.raises(InterpolationResolutionError) as caught:
        compose_params([override])
    cause = caught.value.__cause__ or caught.value.__context__  # the resolver's own error
    assert isinstance(cause, PipelineError), caught.value
    return str(cause)


@pytest.mark.parametrize(
    ("override", "line"),
    [
        (
            "finetune.epochs=0",
            "finetune.epochs=0: must be at least 1; set finetune.epochs=1 or more",
        ),
        (
            "finetune.learning_rate=-1",
            "finetune.learning_rate=-1.0: must be more than 0; "
            "set finetune.learning_rate to a value more than 0",
        ),
        (
            "finetune.batch_size=0",
            "finetune.batch_size=0: must be at least 1; set finetune.batch_size=1 or more",
        ),
        (
            "finetune.epochs_by_task.mrpc=0",
            "finetune.epochs_by_task.mrpc=0: must be at least 1; "
            "set finetune.epochs_by_task.mrpc=1 or more",
        ),
        (
            "finetune.warmup_ratio=1.5",
            "finetune.warmup_ratio=1.5: must be at least 0 and at most 1; "
            "set finetune.warmup_ratio to a value at least 0 and at most 1",
        ),
        (
            "clark_syntax.probe.epochs=0",
            "clark_syntax.probe.epochs=0: must be at least 1; "
            "set clark_syntax.probe.epochs=1 or more",
        ),
        (
            "clark_coref.report_examples=0",
            "clark_coref.report_examples=0: must be at least 1; "
            "set clark_coref.report_examples=1 or more",
        ),
        (
            "clark_heads.num_examples=0",
            "clark_heads.num_examples=0: must be at least 1; "
            "set clark_heads.num_examples=1 or more",
        ),
        (
            "shared.max_length=1",
            "shared.max_length=1: must be at least 2; set shared.max_length=2 or more",
        ),
        (
            "prepare.max_train_rows=0",
            "prepare.max_train_rows=0: must be at least 1; set prepare.max_train_rows=1 or more",
        ),
        (
            "prepare.min_rows.mrpc.train=0",
            "prepare.min_rows.mrpc.train=0: must be at least 1; "
            "set prepare.min_rows.mrpc.train=1 or more",
        ),
        (
            "patterns.sample.per_class=0",
            "patterns.sample.per_class=0: must be at least 1; "
            "set patterns.sample.per_class=1 or more",
        ),
        (
            "ablate.num_examples=0",
            "ablate.num_examples=0: must be at least 1; set ablate.num_examples=1 or more",
        ),
    ],
)
def test_a_value_out_of_bounds_fails_at_composition_in_one_line(override: str, line: str) -> None:
    assert _refusal(override) == line


def _batch_size_keys(schema: type, prefix: str = "") -> list[str]:
    """Every setting of `schema` whose name ends in batch_size, through nested dataclasses."""
    hints, keys = get_type_hints(schema), []
    for declared in fields(schema):
        held = _held(hints[declared.name])
        if is_dataclass(held) and held is hints[declared.name]:
            keys += _batch_size_keys(held, f"{prefix}{declared.name}.")
        elif declared.name.endswith("batch_size"):
            keys.append(f"{prefix}{declared.name}")
    return keys


def test_every_batch_size_of_every_group_is_at_least_one() -> None:
    keys = _batch_size_keys(Config)
    assert {
        "finetune.eval_batch_size",
        "clark_coref.batch_size",
        "patterns.classifier.batch_size",
    } <= set(keys)
    cfg = composed()
    for key in keys:
        bad = cfg.copy()
        OmegaConf.update(bad, key, 0)
        with pytest.raises(PipelineError, match=f"^{re.escape(key)}=0: must be at least 1;"):
            check_bounds(bad, Config)


@pytest.mark.parametrize(
    "overrides",
    [
        ["prepare.max_train_rows=null", "ablate.num_examples=null"],  # null: every row
        ["finetune.warmup_ratio=0", "finetune.epochs=1", "shared.max_length=2"],  # the ends
        ["finetune.warmup_ratio=1", "finetune.checkpoint_every=0"],
    ],
)
def test_null_and_the_bounds_own_ends_compose(overrides: list[str]) -> None:
    assert "settings_in_bounds: true" in compose_params(overrides)


def test_a_stage_refuses_a_params_yaml_edited_out_of_bounds(tmp_path, monkeypatch) -> None:
    cfg = composed()
    cfg.finetune.epochs_by_task = {"rte": 0}
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PipelineError) as caught:
        _load_dvc_config("rte")
    assert str(caught.value) == (
        "finetune.epochs_by_task.rte=0: must be at least 1; "
        "set finetune.epochs_by_task.rte=1 or more"
    )
