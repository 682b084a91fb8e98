"""A Hydra job reads inputs made under its own model and profile (StageRun.inputs_root):
the DVC run's outputs when params.yaml names the same ones, else <paths.runs>/<profile>/
<model>, which the Hydra jobs of prepare, finetune and dump_attention of that model and
profile fill; where its input is missing it refuses in one line naming the command that
makes it.

Two tiny BERTs of different shapes (2 layers x 4 heads, the DVC run's; 3 x 2) go through
prepare, finetune and dump_attention as Hydra jobs on the micro profile; each job's
attention store must hold its own model's layers and heads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.stage import StageRun
from stages import dump_attention, finetune, prepare
from tests.support.builders import composed

SHAPES = {"tiny_random": (2, 4), "tiny_deep": (3, 2)}  # model name -> (layers, heads)
DEEP = (
    "model.name=tiny_deep",
    "model.random_config.num_hidden_layers=3",
    "model.random_config.num_attention_heads=2",
)


def config(root: Path, model: str) -> OmegaConf:
    overrides = ("experiment=micro", "finetune.baselines.random_init=false")
    cfg = composed(*overrides, *(DEEP if model == "tiny_deep" else ()))
    if model == "tiny_mpnet":
        cfg = composed(*overrides, "model=tiny_mpnet")
    cfg.paths.data, cfg.paths.outputs = str(root / "data"), str(root / "outputs")
    cfg.paths.runs, cfg.device = str(root / "runs"), "cpu"
    cfg.paths.shared_data = str((root / "shared").resolve())  # linked by `dvc_run`
    cfg.tasks = ["rte"]
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "rte.yaml")
    return cfg


def store_shape(store: Path) -> tuple[int, int]:
    """(layers, heads) of the fine-tuned maps in an attention store (numbered from 0)."""
    frame = pd.read_parquet(store)
    tuned = frame[frame["variant"] == "finetuned"]
    heads = [c for c in frame.columns if c.startswith("head_")]
    return int(tuned["layer"].max()) + 1, len(heads)


@pytest.fixture
def dvc_run(tmp_path, monkeypatch, shared_data) -> Path:
    """A working folder whose params.yaml and outputs are the DVC run of tiny_random."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DARK_SECRETS_DATA", raising=False)
    (tmp_path / "shared").symlink_to(shared_data.resolve())
    cfg = config(tmp_path, "tiny_random")
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    for stage in (prepare, finetune, dump_attention):
        stage.run(StageRun(cfg, out_root=tmp_path / "outputs", under_dvc=True))
    return tmp_path


def hydra_job(root: Path, model: str, stage, job: str) -> Path:
    out = root / "jobs" / f"{model}-{job}"
    stage.run(StageRun(config(root, model), out_root=out, under_dvc=False))
    return out


def test_each_model_of_a_sweep_computes_on_its_own_inputs(dvc_run) -> None:
    assert store_shape(dvc_run / "outputs/attention/rte/seed42.parquet") == SHAPES["tiny_random"]
    for stage, job in ((prepare, "prepare"), (finetune, "finetune")):
        hydra_job(dvc_run, "tiny_deep", stage, job)
    keyed = dvc_run / "runs" / "micro" / "tiny_deep"
    config_json = json.loads((keyed / "models/rte/seed42/config.json").read_text())
    assert (config_json["num_hidden_layers"], config_json["num_attention_heads"]) == (3, 2)
    for model in SHAPES:  # the sweep: model=tiny_random,tiny_deep
        hydra_job(dvc_run, model, dump_attention, "dump")
    assert store_shape(keyed / "attention/rte/seed42.parquet") == SHAPES["tiny_deep"]
    beside_dvc = dvc_run / "jobs" / "tiny_random-dump" / "attention/rte/seed42.parquet"
    assert store_shape(beside_dvc) == SHAPES["tiny_random"]  # read the DVC run's model
    assert not (dvc_run / "runs" / "micro" / "tiny_random").exists()


def test_a_job_without_its_input_refuses_in_one_line(dvc_run) -> None:
    with pytest.raises(PipelineError) as raised:
        hydra_job(dvc_run, "tiny_mpnet", dump_attention, "dump")
    message = str(raised.value)
    assert "\n" not in message
    assert "model=tiny_mpnet experiment=micro" in message
    assert "the DVC outputs hold model=tiny_random experiment=micro" in message
    assert message.endswith(
        "make it with `python -m stages.finetune task=rte model=tiny_mpnet experiment=micro`"
    )
