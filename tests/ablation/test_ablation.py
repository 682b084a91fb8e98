"""Ablation sweeps, gradient head importance and pruning, on a tiny random BERT (2 x 4 heads)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from omegaconf import OmegaConf
from omegaconf.errors import ValidationError
from torch._dynamo import register_backend
from transformers import (
    DebertaV2Config,
    DebertaV2ForSequenceClassification,
    RobertaConfig,
    RobertaForSequenceClassification,
)

from pipeline.ablation.ablate import ablate_task
from pipeline.ablation.figures import ablation_figures
from pipeline.ablation.importance import (
    gated_logits,
    head_importance,
    least_important,
    metric_near_fraction,
    normalise_per_layer,
    prunable_fraction,
    pruning_curve,
    pruning_schedule,
)
from pipeline.ablation.sweep import (
    Ablation,
    SweepResult,
    Uncertainty,
    head_ablations,
    layer_ablations,
    plan_chunks,
    summary,
    sweep,
    sweep_table,
    task_loss,
)
from pipeline.analyses.ablate.settings import AblateConfig
from pipeline.attention.engine import HeadControl, attach, head_mask
from pipeline.attention.layerwise import Layerwise
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.precision import autocast
from pipeline.core.schema import load_task, typed
from pipeline.core.stage import StageRun
from pipeline.data.glue import read_local_split
from pipeline.data.sampling import evaluation_sample
from pipeline.models.labelled import labelled_rows
from pipeline.models.loading import load_classifier
from pipeline.models.metrics import task_metrics
from stages.ablate import run
from tests.support.ablation_models import SHAPE, seven_rows, strong_classifier
from tests.support.builders import drawn
from tests.support.oracles.naive_ablation import naive_sweep

QUICK = Uncertainty(bootstrap_resamples=200, permutation_resamples=999, seed=0)


@pytest.fixture(scope="module")
def layerwise(tiny_model_cfg, tokenizer) -> Layerwise:
    return Layerwise.of(attach(strong_classifier(tiny_model_cfg, tokenizer)))


@pytest.fixture(scope="module")
def rows() -> list[dict[str, list[int]]]:
    return seven_rows()


LABELS = np.array([0, 1, 1, 0, 1, 0, 0])


@torch.no_grad()
def one_by_one(model, rows, control: HeadControl | None = None) -> np.ndarray:
    """Logits [N, C] from the model's own forward pass, one unpadded example at a time."""
    logits = []
    for row in rows:
        batch = {k: torch.tensor([v]) for k, v in row.items()}
        batch["attention_mask"] = torch.ones_like(batch["input_ids"])
        logits.append(model(**batch, head_control=control).logits)
    return torch.cat(logits).numpy()


@pytest.mark.parametrize("per_pass", [1, 3, 12])  # one per pass, some, a whole layer's at once
@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_sweep_equals_naive_loop(layerwise, rows, mode, per_pass):
    ablations = head_ablations(SHAPE) + layer_ablations(SHAPE)
    fast = sweep(
        layerwise,
        rows,
        ablations,
        mode=mode,
        pad_id=0,
        batch_size=3,
        ablations_per_pass=per_pass,
        cache_budget_mb=1e-4,
        progress=False,  # a tiny budget: one batch per cache chunk
    )
    masks = [a.mask(SHAPE) for a in ablations]
    baseline, logits = naive_sweep(
        layerwise.model, rows, masks, mode=mode, pad_id=0, batch_size=3, progress=False
    )
    assert fast.logits.shape == (len(ablations), len(rows), 2)
    np.testing.assert_allclose(fast.baseline, baseline, atol=1e-5)
    np.testing.assert_allclose(fast.logits, logits, atol=1e-5)
    # the ablations really change the output, so the equality above means something
    assert np.abs(logits - baseline).max() > 0.05


@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_layer_disabling_equals_all_its_heads(layerwise, rows, mode):
    per_layer = sweep(layerwise, rows, layer_ablations(SHAPE), mode=mode, pad_id=0, progress=False)
    every_head = [head_mask(SHAPE, heads=[(layer, h) for h in range(4)]) for layer in range(2)]
    _, logits = naive_sweep(layerwise.model, rows, every_head, mode=mode, pad_id=0, progress=False)
    np.testing.assert_allclose(per_layer.logits, logits, atol=1e-5)


@pytest.mark.parametrize("ablation", [Ablation(2, 0), Ablation(0, 4), Ablation(-1), Ablation(3)])
def test_out_of_range_ablation_names_the_shape(layerwise, rows, ablation):
    with pytest.raises(PipelineError, match="2 layers x 4 heads"):
        sweep(layerwise, rows, [ablation], mode="uniform", pad_id=0, progress=False)


def test_unsupported_architecture_fails_clearly():
    config = DebertaV2Config(vocab_size=100, hidden_size=16, num_hidden_layers=1,
                             num_attention_heads=2, intermediate_size=32)  # fmt: skip
    with pytest.raises(PipelineError, match="not supported layer by layer"):
        Layerwise.of(DebertaV2ForSequenceClassification(config))


def test_plan_chunks_respects_the_budget():
    assert plan_chunks([3, 3, 3, 5], 6) == [[0, 1], [2], [3]]
    assert plan_chunks([9, 2], 6) == [[0], [1]]  # an oversized batch still gets its own chunk
    assert plan_chunks([1, 1, 1], 100) == [[0, 1, 2]]


def test_sweep_table_and_summary_known_answer():
    task = load_task("rte")
    labels = np.array([0, 1, 1, 0])
    right = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])  # all 4 correct
    wrong_one = right.copy()
    wrong_one[0] = [0.0, 1.0]  # 3 of 4 correct

    result = SweepResult(
        ablations=[Ablation(0, 0), Ablation(0, 1), Ablation(0)],
        baseline=wrong_one,
        logits=np.stack([right, wrong_one, wrong_one]),
    )
    table = sweep_table(result, task, labels, QUICK)
    assert table["delta"].tolist() == [0.25, 0.0, 0.0]
    # one example of four changes: every sign flip gives |mean| = 0.25 (exact test), p = 1
    assert table["p_value"].tolist() == [1.0, 1.0, 1.0]
    assert table["loss_p_value"].tolist() == [1.0, 1.0, 1.0]
    assert table["q_value"].tolist() == [1.0, 1.0, 1.0]
    # bootstrap of a change on one of four examples: 0 or 0.25 per resampled copy
    assert table["ci_low"].iloc[0] == 0.0 and 0.25 <= table["ci_high"].iloc[0] <= 0.75
    assert table[["ci_low", "ci_high", "loss_ci_low", "loss_ci_high"]].iloc[1].tolist() == [0] * 4
    assert table["baseline"].tolist() == [0.75] * 3
    # cross-entropy of a logit margin of 1: log(1 + e^-1) when right, log(1 + e^1) when wrong
    right_loss, wrong_loss = np.log1p(np.exp(-1.0)), np.log1p(np.exp(1.0))
    assert table["loss"].iloc[0] == pytest.approx(right_loss)
    assert table["delta_loss"].tolist() == pytest.approx([(right_loss - wrong_loss) / 4, 0, 0])
    heads, layers = table[table["head"] >= 0], table[table["head"] < 0]
    numbers = summary(heads, layers, task)
    assert numbers["best_head"] == "L1-H1"
    assert numbers["best_head_gain"] == 0.25
    assert numbers["share_heads_help"] == 0.5
    assert numbers["share_heads_hurt"] == 0.0
    assert numbers["best_layer"] == "L1"
    assert numbers["heads_significantly_help"] == numbers["heads_significantly_hurt"] == 0


def test_every_other_metric_of_the_task_gets_its_change_and_interval():
    """MRPC's F1 beside its accuracy: labels 1, 1, 0, 0; the baseline calls all four 1
    (F1 = 2 x 2 / (2 x 2 + 2) = 2/3), the ablated model gets the first 0 wrong-way round
    too and the third right (predictions 1, 1, 0, 1: F1 = 4/5)."""
    task = load_task("mrpc")
    labels = np.array([1, 1, 0, 0])
    ones = np.array([[0.0, 1.0]] * 4)
    better = ones.copy()
    better[2] = [1.0, 0.0]
    result = SweepResult(ablations=[Ablation(0, 0)], baseline=ones, logits=better[None])
    table = sweep_table(result, task, labels, QUICK)
    assert task.main_metric == "accuracy" and table["delta"].iloc[0] == pytest.approx(0.25)
    assert table["delta_f1"].iloc[0] == pytest.approx(4 / 5 - 2 / 3)
    assert table["ci_low_f1"].iloc[0] <= table["delta_f1"].iloc[0] <= table["ci_high_f1"].iloc[0]
    assert list(table.columns[-3:]) == ["delta_f1", "ci_low_f1", "ci_high_f1"]
    assert "delta_accuracy" not in table  # the main metric's change is `delta`


def test_sweep_table_tests_and_corrects_known_answers():
    """Eight examples (2^8 sign patterns: the test is exact): disabling head 0 turns six
    wrong answers right and none the other way (two-sided sign-flip p = 2 / 2^6), head 1
    changes nothing; BH over the two heads gives q = p x 2 / rank."""
    task = load_task("rte")
    labels = np.array([1] * 8)
    baseline = np.array([[1.0, 0.0]] * 6 + [[0.0, 1.0]] * 2)  # 2 of 8 correct
    result = SweepResult(
        ablations=[Ablation(0, 0), Ablation(0, 1), Ablation(0)],
        baseline=baseline,
        logits=np.stack([np.array([[0.0, 1.0]] * 8), baseline, baseline]),
    )
    table = sweep_table(result, task, labels, QUICK)
    assert table["delta"].iloc[0] == pytest.approx(0.75)
    assert table["p_value"].iloc[0] == pytest.approx(2 / 2**6)
    assert table["q_value"].iloc[0] == pytest.approx(2 / 2**6 * 2 / 1)
    assert table["p_value"].iloc[1] == 1.0 and table["q_value"].iloc[1] == 1.0
    assert table["loss_p_value"].iloc[0] == pytest.approx(2 / 2**6)
    assert 0 < table["ci_low"].iloc[0] < 0.75 < table["ci_high"].iloc[0] <= 1.0
    assert table["loss_ci_high"].iloc[0] < 0  # the loss falls on every changed example
    heads, layers = table[table["head"] >= 0], table[table["head"] < 0]
    numbers = summary(heads, layers, task, alpha=0.1)
    assert numbers["heads_significantly_help"] == 1  # q = 1/16 < 0.1
    assert numbers["heads_significantly_lower_loss"] == 1
    assert numbers["heads_significantly_hurt"] == numbers["layers_significantly_help"] == 0
    assert summary(heads, layers, task, alpha=0.05)["heads_significantly_help"] == 0


def test_importance_is_the_sum_of_per_example_gradient_magnitudes(layerwise, rows):
    task = load_task("rte")
    model = layerwise.model
    pruned = head_mask(SHAPE, heads=[(1, 2)])
    result = head_importance(layerwise, rows, LABELS, task, pad_id=0, pruned=pruned, batch_size=4)
    expected = torch.zeros(SHAPE, dtype=torch.float64)
    for row, label in zip(rows, LABELS, strict=True):  # one example at a time, [L, H] gate
        batch = {k: torch.tensor([v]) for k, v in row.items()}
        batch["attention_mask"] = torch.ones_like(batch["input_ids"])
        gate = (~pruned).float().requires_grad_(True)
        logits = model(**batch, head_control=HeadControl(gate=gate)).logits
        (grad,) = torch.autograd.grad(task_loss(task, logits, torch.tensor([label])), gate)
        expected += grad.abs().double()
    assert result.scores.shape == SHAPE
    np.testing.assert_allclose(result.scores, expected.numpy(), rtol=1e-4, atol=1e-7)
    assert (result.scores > 0).all()


def test_importance_normalised_per_layer(layerwise, rows):
    scores = head_importance(layerwise, rows, LABELS, load_task("rte"), pad_id=0).scores
    normalised = normalise_per_layer(scores)
    assert normalised.shape == SHAPE
    np.testing.assert_allclose(np.linalg.norm(normalised, axis=1), [1.0, 1.0], atol=1e-9)
    hand = normalise_per_layer(
        np.array([[3.0, 4.0, 9.0], [0.0, 0.0, 0.0]]),
        pruned=np.array([[False, False, True], [False] * 3]),
    )
    np.testing.assert_allclose(hand, [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0]])


def test_least_important_skips_pruned_heads():
    scores = np.array([[0.5, 0.1, 0.9], [0.2, 0.3, 0.05]])
    pruned = np.array([[False, False, False], [False, False, True]])
    chosen = least_important(scores, pruned, 2)
    assert chosen.tolist() == [[False, True, False], [True, False, False]]


def test_pruning_schedule_steps_of_ten_percent():
    assert pruning_schedule(72, 0.1) == [0, 7, 14, 22, 29, 36, 43, 50, 58, 65, 72]
    assert pruning_schedule(8, 0.1) == list(range(9))


def test_pruning_curve_ends_with_every_head_pruned(layerwise, rows):
    task = load_task("rte")
    curve, first = pruning_curve(layerwise, rows, LABELS, task, pad_id=0, step=0.25, progress=False)
    assert curve["heads_pruned"].tolist() == [0, 2, 4, 6, 8]
    assert (curve["ci_low"] <= curve["accuracy"]).all()
    assert (curve["accuracy"] <= curve["ci_high"]).all()
    assert (curve["delta_ci_low"] <= curve["delta"]).all()
    assert (curve["delta"] <= curve["delta_ci_high"]).all()
    # the unpruned point is compared with itself: no change, a zero-width interval
    assert curve.loc[0, ["delta", "delta_ci_low", "delta_ci_high"]].tolist() == [0.0, 0.0, 0.0]
    assert curve["fraction_pruned"].iloc[-1] == 1.0
    assert first.shape == SHAPE
    # the last point is the model with every head's output multiplied by 0
    all_off = HeadControl(disabled=torch.ones(SHAPE, dtype=torch.bool), mode="zero")
    expected = task_metrics(task, LABELS, one_by_one(layerwise.model, rows, all_off))
    assert curve["accuracy"].iloc[-1] == pytest.approx(expected["accuracy"])


def test_gated_logits_under_bf16_autocast_are_float32_near_float32s(layerwise, rows):
    """precision=bf16 (and `auto` on a GPU) runs the pruning curve's forward under autocast."""
    pruned = torch.zeros(SHAPE, dtype=torch.bool)
    pruned[0, 1] = pruned[1, 3] = True
    full = gated_logits(layerwise, rows, pruned, pad_id=0, batch_size=3)
    with autocast("bf16", "cpu"):
        low = gated_logits(layerwise, rows, pruned, pad_id=0, batch_size=3)
    assert low.dtype == np.float32
    assert 0 < np.abs(low - full).max() < 0.05 * np.abs(full).max()


def test_sweep_summary_on_a_frame():
    heads = pd.DataFrame(
        {
            "layer": [0, 0, 1, 1],
            "head": [0, 1, 0, 1],
            "delta": [0.1, -0.2, 0.0, 0.3],
            "q_value": [0.01, 0.04, 1.0, 0.2],
            "delta_loss": [-0.1, 0.2, -0.05, -0.3],
            "loss_q_value": [0.01, 0.01, 0.5, 0.01],
            "baseline": [0.5] * 4,
        }
    )
    layers = pd.DataFrame(
        {
            "layer": [0, 1],
            "delta": [-0.1, 0.05],
            "q_value": [0.01, 0.5],
            "delta_loss": [0.2, 0.0],
            "loss_q_value": [0.3, 1.0],
            "baseline": [0.5] * 2,
        }
    )
    numbers = summary(heads, layers, load_task("sst2"))
    assert numbers["heads_significantly_help"] == 1  # L1-H1 (L2-H2 helps more, q = 0.2)
    assert numbers["heads_significantly_hurt"] == 1
    assert numbers["heads_significantly_lower_loss"] == 2
    assert numbers["heads_significantly_higher_loss"] == 1
    assert numbers["layers_significantly_hurt"] == 1
    assert numbers["layers_significantly_help"] == numbers["layers_significantly_lower_loss"] == 0
    assert numbers["best_head"] == "L2-H2"
    assert numbers["worst_head"] == "L1-H2"
    assert numbers["share_heads_help"] == 0.5
    assert numbers["share_heads_hurt"] == 0.25
    assert numbers["share_heads_lower_loss"] == 0.75
    assert numbers["best_layer"] == "L2"
    assert numbers["worst_layer_delta"] == -0.1


@pytest.fixture
def prepared_rte(tmp_path, tiny_model_cfg, tokenizer, shared_data) -> OmegaConf:
    """Prepared RTE rows (12 dev, 6 train), a saved tiny classifier and the stage's config."""
    task = load_task("rte")
    frame, _ = read_local_split(shared_data / "glue_data", task, "validation")
    (tmp_path / "data/glue/rte").mkdir(parents=True)
    frame.head(12).to_parquet(tmp_path / "data/glue/rte/validation.parquet")
    train, _ = read_local_split(shared_data / "glue_data", task, "train")
    train.head(6).to_parquet(tmp_path / "data/glue/rte/train.parquet")
    model = load_classifier(tiny_model_cfg, tokenizer, num_labels=2, seed=0)
    model.save_pretrained(tmp_path / "outputs/models/rte/seed0")  # cfg.seed 0: the primary
    cfg = OmegaConf.create(
        {
            "seed": 0,
            "device": "cpu",
            "precision": "fp32",
            "deterministic": True,
            "compile": {"enabled": False, "pad_multiple": 8, "backend": "inductor"},
            "paths": {"outputs": str(tmp_path / "outputs"), "data": str(tmp_path / "data")},
            "model": tiny_model_cfg,
            "task": OmegaConf.load(CONF_DIR / "task" / "rte.yaml"),
            "shared": {"max_length": 32},
            "ablate": OmegaConf.load(CONF_DIR / "ablate" / "default.yaml"),
        }
    )
    cfg.ablate.num_examples = 10
    return cfg


def test_stage_writes_tables_figures_and_metrics(tmp_path, prepared_rte):
    run(StageRun(cfg=prepared_rte, out_root=tmp_path / "outputs", under_dvc=True))

    plots = tmp_path / "outputs/plots/ablate/rte/seed0"
    heads = pd.read_csv(plots / "heads.csv")
    layers = pd.read_csv(plots / "layers.csv")
    importance = pd.read_csv(plots / "importance.csv")
    assert len(heads) == 8 and len(layers) == 2
    assert pd.read_csv(plots / "pruning.csv")["heads_pruned"].iloc[-1] == 8
    # layers and heads count from 1 in every table, as in the metrics' names
    for table in (heads, importance):
        assert table[["layer", "head"]].to_numpy().tolist() == [
            [layer, head] for layer in (1, 2) for head in (1, 2, 3, 4)
        ]
    assert layers["layer"].tolist() == [1, 2]
    for name in ("fig8_heads", "fig9_layers", "pruning"):
        caption = drawn(tmp_path / f"outputs/figures/ablate/rte/seed0/{name}.png")
        assert "on 10 rte dev examples" in caption, caption
    metrics = json.loads((tmp_path / "outputs/metrics/ablate/rte/seed0.json").read_text())
    assert metrics["num_examples"] == 10
    assert metrics["importance_examples"] == 6  # the train rows (importance_split: train)
    # the evaluated rows: a seeded sample stratified by label, their ids written beside
    dev = pd.read_parquet(tmp_path / "data/glue/rte/validation.parquet")
    examples = pd.read_csv(plots / "examples.csv")
    sampled = evaluation_sample(dev, load_task("rte"), 10, prepared_rte.seed)
    assert examples["idx"].tolist() == sampled["idx"].tolist()
    assert examples["label"].value_counts().to_dict() == sampled["label"].value_counts().to_dict()
    for column in ("ci_low", "ci_high", "p_value", "q_value", "loss_p_value", "loss_q_value"):
        assert heads[column].notna().all() and layers[column].notna().all()
    assert (heads["ci_low"] <= heads["delta"]).all() and (heads["delta"] <= heads["ci_high"]).all()
    assert metrics["baseline_ci_low"] <= metrics["baseline"] <= metrics["baseline_ci_high"]
    assert metrics["heads_significantly_help"] == int(
        ((heads["q_value"] < 0.05) & (heads["delta"] > 0)).sum()
    )
    layer, head = heads.loc[heads["delta"].idxmax(), ["layer", "head"]].astype(int)
    assert metrics["best_head"] == f"L{layer}-H{head}"
    assert metrics["best_layer"] == f"L{layers.loc[layers['delta'].idxmax(), 'layer']}"
    assert metrics["best_head_gain"] == pytest.approx(heads["delta"].max())
    assert metrics["share_heads_help"] == pytest.approx((heads["delta"] > 0).mean())
    assert not [key for key in metrics if "second" in key or "time" in key]


def test_stage_scores_importance_on_the_dev_rows_without_reading_train(tmp_path, prepared_rte):
    (tmp_path / "data/glue/rte/train.parquet").unlink()
    prepared_rte.ablate.importance_split = "eval"
    run(StageRun(cfg=prepared_rte, out_root=tmp_path / "outputs", under_dvc=True))
    metrics = json.loads((tmp_path / "outputs/metrics/ablate/rte/seed0.json").read_text())
    assert metrics["importance_examples"] == metrics["num_examples"] == 10
    caption = json.loads((tmp_path / "outputs/figures/ablate/rte/seed0/pruning.json").read_text())
    assert "gradient importance on the same examples" in caption["caption"]
    assert caption["config"]["prune_step"] == 0.1


def test_the_schema_rejects_an_unknown_importance_split():
    node = OmegaConf.load(CONF_DIR / "ablate" / "default.yaml")
    node.importance_split = "test"
    with pytest.raises(ValidationError, match="full_key: importance_split"):
        typed(AblateConfig, node)


def test_ablate_task_numbers_from_one_what_the_sweep_numbers_from_zero(layerwise, tokenizer, rows):
    task = load_task("rte")
    node = OmegaConf.load(CONF_DIR / "ablate" / "default.yaml")
    node.importance_split = "eval"
    settings = typed(AblateConfig, node)
    dev = pd.DataFrame(
        {
            "idx": range(7),
            "sentence1": ["The cat sat.", "A dog ran far away.", "Birds fly."] * 2 + ["No."],
            "sentence2": ["A cat sat.", "No dog ran.", "They do not."] * 2 + ["Yes."],
            "label": LABELS,
        }
    )
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(False)
        result = ablate_task(
            layerwise.model, tokenizer, task, dev, None, settings, max_length=32, seed=0
        )
        assert torch.are_deterministic_algorithms_enabled()  # the setting's default
    finally:
        torch.use_deterministic_algorithms(was_deterministic)

    encoded = labelled_rows(tokenizer, task, dev, 32, "rte dev")
    zero_based = sweep_table(
        sweep(layerwise, encoded.rows, head_ablations(SHAPE) + layer_ablations(SHAPE),
              mode="uniform", pad_id=0, batch_size=8, progress=False),
        task,
        LABELS,
        Uncertainty(settings.bootstrap_resamples, settings.permutation_resamples, seed=0),
    )  # fmt: skip
    heads = zero_based[zero_based["head"] >= 0].reset_index(drop=True)
    expected = heads.assign(layer=heads["layer"] + 1, head=heads["head"] + 1)
    pd.testing.assert_frame_equal(result.heads.reset_index(drop=True), expected)
    assert result.layers["layer"].tolist() == [1, 2]
    assert result.importance[["layer", "head"]].min().tolist() == [1, 1]
    assert set(result.tables) == {"heads", "layers", "importance", "pruning", "examples"}
    assert result.examples["idx"].tolist() == list(range(7))  # 48 asked of 7: all, in order
    assert result.metrics["importance_examples"] == 7

    drawn = ablation_figures(result, "rte", settings)
    heatmap = drawn["fig8_heads"].figure.axes[0]
    assert [t.get_text() for t in heatmap.get_xticklabels()] == ["1", "2", "3", "4"]
    assert [t.get_text() for t in heatmap.get_yticklabels()] == ["1", "2"]
    assert "7 rte dev examples" in drawn["fig9_layers"].caption
    assert "on the same examples" in drawn["pruning"].caption


def test_labels_outside_the_task_fail_with_the_split_named(tokenizer):
    frame = pd.DataFrame({"sentence1": ["a"], "sentence2": ["b"], "label": [3]})
    with pytest.raises(PipelineError, match=r"rte dev: labels \[3\] do not fit rte's 2 classes"):
        labelled_rows(tokenizer, load_task("rte"), frame, 16, "rte dev")


def test_metric_near_half_and_prunable_fraction():
    curve = pd.DataFrame(
        {"fraction_pruned": [0.0, 0.25, 0.5, 0.75, 1.0], "accuracy": [0.8, 0.8, 0.7, 0.5, 0.4]}
    )
    assert metric_near_fraction(curve, "accuracy", 0.5) == 0.7
    assert metric_near_fraction(curve, "accuracy", 0.3) == 0.8
    assert prunable_fraction(curve, "accuracy", keep=0.99) == 0.25
    assert prunable_fraction(curve, "accuracy", keep=0.5) == 1.0


def test_roberta_style_classifier_sweeps_like_the_naive_loop():
    config = RobertaConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=40, pad_token_id=1, initializer_range=0.3,
    )  # fmt: skip
    torch.manual_seed(0)
    model = RobertaForSequenceClassification(config)
    layerwise = Layerwise.of(attach(model))  # checks the cut against model(...)
    assert layerwise.model.base_model.pooler is None  # RoBERTa's head reads the first token
    generator = torch.Generator().manual_seed(2)
    rows = [
        {"input_ids": [0, *torch.randint(3, 100, (n,), generator=generator).tolist(), 2]}
        for n in (4, 9, 6)
    ]
    ablations = head_ablations((2, 2)) + layer_ablations((2, 2))
    fast = sweep(layerwise, rows, ablations, mode="uniform", pad_id=1, batch_size=2, progress=False)
    masks = [a.mask((2, 2)) for a in ablations]
    _, logits = naive_sweep(model, rows, masks, mode="uniform", pad_id=1, batch_size=2,
                            progress=False)  # fmt: skip
    np.testing.assert_allclose(fast.logits, logits, atol=1e-5)
    assert np.abs(logits - fast.baseline).max() > 1e-3


def test_pruning_curve_scores_importance_on_other_rows(layerwise, rows):
    task = load_task("rte")
    scoring = (rows[:4], LABELS[:4])
    curve, first = pruning_curve(
        layerwise, rows, LABELS, task, pad_id=0, step=0.5, scoring=scoring, progress=False
    )
    alone = head_importance(layerwise, *scoring, task, pad_id=0).scores
    np.testing.assert_allclose(first, normalise_per_layer(alone))
    full = one_by_one(layerwise.model, rows)
    assert curve["accuracy"].iloc[0] == task_metrics(task, LABELS, full)["accuracy"]
    assert curve["heads_pruned"].tolist() == [0, 4, 8]


def test_benjamini_hochberg_counts_every_head_and_no_layer_in_the_heads_family():
    """Three heads of layer 0 and the whole layer: head 0 turns six of eight wrong answers
    right (p = 2 / 2^6), the others change nothing. Over the three heads, head 0's q is
    p x 3 / 1 = 6 / 64; a family that took head 0 for a layer (head <= 0) would pair it
    with the layer and give p x 2 / 1 = 4 / 64. The layer alone keeps q = p = 1."""
    task = load_task("rte")
    labels = np.array([1] * 8)
    baseline = np.array([[1.0, 0.0]] * 6 + [[0.0, 1.0]] * 2)  # 2 of 8 correct
    right = np.array([[0.0, 1.0]] * 8)
    result = SweepResult(
        ablations=[Ablation(0, 0), Ablation(0, 1), Ablation(0, 2), Ablation(0)],
        baseline=baseline,
        logits=np.stack([right, baseline, baseline, baseline]),
    )
    table = sweep_table(result, task, labels, QUICK)
    assert table["p_value"].iloc[0] == pytest.approx(2 / 2**6)
    assert table["q_value"].iloc[0] == pytest.approx(6 / 64)
    assert table["q_value"].iloc[3] == 1.0


stage_graphs: list[int] = []


@register_backend
def stage_counting_aot_eager(graph: torch.fx.GraphModule, example_inputs):
    """aot_eager, counting the graphs it compiles."""
    stage_graphs.append(len(example_inputs))
    return torch._dynamo.lookup_backend("aot_eager")(graph, example_inputs)


@pytest.mark.slow  # torch.compile on the CPU, 15-40 s; quick compiled checks stay in the default
def test_the_stage_honours_the_compile_setting(tmp_path, prepared_rte):
    """compile.enabled reaches the sweeps and importance: a compiled run (aot_eager, lengths
    padded to multiples of 8) compiles, and its tables match the eager run's within rounding."""
    tables, graphs = {}, {}
    for enabled in (False, True):
        stage_graphs.clear()
        prepared_rte.compile = {
            "enabled": enabled, "pad_multiple": 8, "backend": "stage_counting_aot_eager"
        }  # fmt: skip
        out = tmp_path / f"compiled_{enabled}"
        shutil.copytree(tmp_path / "outputs/models", out / "models")
        prepared_rte.paths.outputs = str(out)
        torch._dynamo.reset()
        with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
            run(StageRun(cfg=prepared_rte, out_root=out, under_dvc=True))
        graphs[enabled] = len(stage_graphs)
        plots = out / "plots/ablate/rte/seed0"
        tables[enabled] = {n: pd.read_csv(plots / f"{n}.csv") for n in ("heads", "importance")}
    torch._dynamo.reset()
    assert graphs[False] == 0 and graphs[True] > 0
    eager, padded = tables[False], tables[True]
    assert padded["heads"]["accuracy"].tolist() == eager["heads"]["accuracy"].tolist()
    np.testing.assert_allclose(padded["heads"]["loss"], eager["heads"]["loss"], atol=1e-5)
    np.testing.assert_allclose(
        padded["importance"]["importance"], eager["importance"]["importance"], atol=1e-5
    )
