"""Typed configs: a wrong type, a misspelt choice or an unknown key fails at composition with
the key named, under Hydra, under DVC's own composition, and when a stage reads params.yaml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from pipeline.core import schema
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.params import compose_params
from pipeline.core.stage import _load_dvc_config

REPO = Path(__file__).resolve().parent.parent


def composition_error(override: str) -> str:
    """The messages of the composition error (and its causes) for one override."""
    with pytest.raises(ConfigCompositionException) as caught:
        compose_params([override])
    messages, error = [], caught.value
    while error is not None:
        messages.append(str(error))
        error = error.__cause__
    return "\n".join(messages)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("finetune.epochs=three", "finetune.epochs"),
        ("shared.max_length=long", "shared.max_length"),
        ("ablate.mode=zeroo", "ablate.mode"),
        ("dump_attention.quantize=int4", "dump_attention.quantize"),
        ("prepare.source=web", "prepare.source"),
    ],
)
def test_a_wrong_value_fails_at_composition_naming_the_key(override: str, key: str) -> None:
    assert key in composition_error(override)


def test_an_unknown_key_fails_at_composition() -> None:
    assert "finetune.epoch" in composition_error("finetune.epoch=3")


def test_the_negation_word_no_stays_a_word() -> None:
    negation = OmegaConf.create(compose_params()).analyze.token_types.negation.lower
    assert "no" in negation and False not in negation


def test_every_config_group_is_typed() -> None:
    untyped = {"experiment", "hydra"}  # profiles override typed groups; hydra/ is Hydra's own
    groups = {p.name for p in CONF_DIR.iterdir() if p.is_dir()} - untyped
    assert groups <= set(schema.Config.__dataclass_fields__)


def test_dvc_composition_is_typed_through_the_hydra_plugin(tmp_path: Path) -> None:
    """DVC composes params.yaml in a process that never imports the project: the schema must
    come in through `hydra.plugins_path` (.dvc/config)."""
    script = (
        "from dvc.utils.hydra import compose_and_dump\n"
        f"compose_and_dump({str(tmp_path / 'p.yaml')!r}, {str(CONF_DIR)!r}, None, 'config', "
        f"{str(REPO / 'pipeline' / 'core')!r}, ['finetune.epochs=three'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode != 0 and "finetune.epochs" in result.stderr
    assert "plugins_path = pipeline/core" in (REPO / ".dvc" / "config").read_text()


def test_a_stage_refuses_a_badly_typed_params_yaml_in_one_line(tmp_path, monkeypatch) -> None:
    cfg = OmegaConf.create(compose_params())
    cfg.finetune.epochs = "three"
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PipelineError, match=r"params.yaml.*`finetune.epochs`") as caught:
        _load_dvc_config("mrpc")
    assert "\n" not in str(caught.value)


def test_a_stage_reads_its_task_spec_typed(tmp_path, monkeypatch) -> None:
    (tmp_path / "params.yaml").write_text(compose_params())
    monkeypatch.chdir(tmp_path)
    cfg = _load_dvc_config("stsb")
    assert cfg.task.name == "stsb" and cfg.task.is_regression is True
    assert cfg.ablate.mode == "uniform" and f"{cfg.ablate.mode}" == "uniform"
