"""A Hydra job reads only inputs made under every setting they depend on
(pipeline/core/input_keys.py): the DVC run's outputs when each such setting equals
params.yaml's, else the folder of those settings under <paths.runs>, which the Hydra jobs of
prepare, finetune and dump_attention fill; where its input is missing it refuses in one line
naming the command that makes it.

Two tiny BERTs of different shapes under one model name (2 layers x 4 heads, the DVC run's;
3 x 2) go through finetune and dump_attention as Hydra jobs on the micro profile; each job's
attention store must hold its own model's layers and heads. A job fine-tuned at another
learning rate keeps its own model, which a job at the default rate never reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from omegaconf import OmegaConf

from pipeline.core import input_keys
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.stage import StageRun
from stages import dump_attention, finetune, prepare
from tests.support.builders import composed

SHAPES = {"2x4": (2, 4), "3x2": (3, 2)}  # (layers, heads) of tiny_random as the DVC run has it
DEEP = ("model.random_config.num_hidden_layers=3", "model.random_config.num_attention_heads=2")
FAST_RATE = "finetune.learning_rate=0.01"


def config(root: Path, *overrides: str) -> OmegaConf:
    cfg = composed("experiment=micro", "finetune.baselines.random_init=false", *overrides)
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
    cfg = config(tmp_path)
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    for stage in (prepare, finetune):
        stage.run(StageRun(cfg, out_root=tmp_path / "outputs", under_dvc=True))
    return tmp_path


def hydra_job(root: Path, stage, job: str, *overrides: str) -> StageRun:
    run = StageRun(config(root, *overrides), out_root=root / "jobs" / job, under_dvc=False)
    stage.run(run)
    return run


def test_each_model_of_a_sweep_under_one_name_computes_on_its_own_inputs(dvc_run) -> None:
    hydra_job(dvc_run, finetune, "finetune-3x2", *DEEP)
    keyed = input_keys.folder(config(dvc_run, *DEEP), "finetune")
    assert keyed.parent == dvc_run / "runs" / "micro" / "tiny_random"  # profile, model
    assert keyed.name.startswith("finetune-rte-")  # what made it, its task, the digest
    config_json = json.loads((keyed / "models/rte/seed42/config.json").read_text())
    assert (config_json["num_hidden_layers"], config_json["num_attention_heads"]) == (3, 2)
    manifest = yaml.safe_load((keyed / input_keys.MANIFEST).read_text())
    assert manifest["settings"]["model"]["random_config"]["num_hidden_layers"] == 3
    assert manifest["settings"]["finetune"]["learning_rate"] == 5e-5

    for shape, overrides in (("2x4", ()), ("3x2", DEEP)):  # the sweep over the model's shape
        hydra_job(dvc_run, dump_attention, f"dump-{shape}", *overrides)
    deep_store = input_keys.folder(config(dvc_run, *DEEP), "dump_attention")
    assert store_shape(deep_store / "attention/rte/seed42.parquet") == SHAPES["3x2"]
    beside_dvc = dvc_run / "jobs" / "dump-2x4" / "attention/rte/seed42.parquet"
    assert store_shape(beside_dvc) == SHAPES["2x4"]  # read the DVC run's model


def test_a_model_fine_tuned_at_another_rate_is_read_only_at_that_rate(dvc_run) -> None:
    made = hydra_job(dvc_run, finetune, "finetune-fast", FAST_RATE)
    fast_models = input_keys.folder(made.cfg, "finetune")
    assert (fast_models / "models/rte/seed42/model.safetensors").exists()
    assert not (dvc_run / "jobs/finetune-fast/models").exists()
    default = StageRun(config(dvc_run), out_root=dvc_run / "jobs" / "ablate", under_dvc=False)
    assert default.model_folder == dvc_run / "outputs/models/rte/seed42"  # the DVC run's
    fast = StageRun(config(dvc_run, FAST_RATE), out_root=dvc_run / "jobs" / "x", under_dvc=False)
    assert fast.model_folder == fast_models / "models/rte/seed42"
    assert fast.data() == dvc_run / "data"  # prepare's settings are the DVC run's


def test_without_a_dvc_run_of_its_settings_a_job_refuses_the_model_of_another_rate(
    dvc_run,
) -> None:
    (dvc_run / "params.yaml").write_text(OmegaConf.to_yaml(config(dvc_run, "seed=43")))
    hydra_job(dvc_run, prepare, "prepare")
    hydra_job(dvc_run, finetune, "finetune-fast", FAST_RATE)
    with pytest.raises(PipelineError) as raised:
        _ = StageRun(
            config(dvc_run), out_root=dvc_run / "jobs" / "ablate", under_dvc=False
        ).model_folder
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("no fine-tuned model made under this job's settings (its ")
    assert "differ from params.yaml's in seed)" in message
    assert message.endswith(
        "make it with `python -m stages.finetune task=rte model=tiny_random experiment=micro`"
    )


def test_a_job_without_its_input_refuses_in_one_line(dvc_run) -> None:
    run = StageRun(
        config(dvc_run, "model.name_or_path=elsewhere/bert"),
        out_root=dvc_run / "jobs" / "dump",
        under_dvc=False,
        overrides=("task=rte", "experiment=micro", "model.name_or_path=elsewhere/bert"),
    )
    with pytest.raises(PipelineError) as raised:
        dump_attention.run(run)
    message = str(raised.value)
    assert "\n" not in message
    assert "(its settings differ from params.yaml's in model.name_or_path)" in message
    assert message.endswith(
        "make it with `python -m stages.finetune task=rte experiment=micro "
        "model.name_or_path=elsewhere/bert`"
    )
    assert not (dvc_run / "runs").exists()  # a refusal writes nothing


def test_results_of_other_stages_are_read_only_under_the_settings_that_made_them(
    dvc_run,
) -> None:
    """gates reads ablate's tables, which only the DVC run keeps: a job fine-tuned at another
    rate refuses them in one line naming the DVC experiment that makes them."""
    default = StageRun(config(dvc_run), out_root=dvc_run / "jobs" / "gates", under_dvc=False)
    ablated = default.results_of("plots", "ablate", "rte", "seed42")
    assert ablated == dvc_run / "outputs/plots/ablate/rte/seed42"
    fast = StageRun(
        config(dvc_run, FAST_RATE),
        out_root=dvc_run / "jobs" / "gates-fast",
        under_dvc=False,
        overrides=("task=rte", "experiment=micro", FAST_RATE),
    )
    with pytest.raises(PipelineError) as raised:
        fast.results_of("plots", "ablate", "rte", "seed42")
    assert str(raised.value).endswith(
        "made under other settings (its settings differ in finetune.learning_rate); run it "
        f"with `dvc exp run -S experiment=micro -S {FAST_RATE}`"
    )
    with pytest.raises(PipelineError):
        fast.upstream(reader="cross_seed")
    assert default.upstream(reader="cross_seed") == dvc_run / "outputs"
