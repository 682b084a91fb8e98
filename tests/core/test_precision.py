"""Precision: the dtype choice as a function of the device, float32 left exact, how far
bf16 autocast (CPU) moves attention maps, logits and training from float32, and the model
stages at bf16."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.attention.capture import capture_maps
from pipeline.attention.engine import attach
from pipeline.core.errors import PipelineError
from pipeline.core.precision import autocast, choose_dtype, grad_scaler, set_determinism
from pipeline.core.schema import load_task
from pipeline.data.encoding import collate
from pipeline.models.loading import load_classifier
from pipeline.models.training import predict, train
from tools.params import compose_params

CPU = torch.device("cpu")


@pytest.mark.parametrize(
    ("setting", "device_type", "bf16", "expected"),
    [
        ("auto", "cpu", True, torch.float32),  # CPU default: exact float32
        ("auto", "cuda", True, torch.bfloat16),  # Ampere and later
        ("auto", "cuda", False, torch.float16),  # older GPUs: fp16 (+ gradient scaler)
        ("auto", "mps", False, torch.float32),
        ("fp32", "cuda", True, torch.float32),
        ("bf16", "cpu", True, torch.bfloat16),  # CPU autocast has bf16
        ("fp16", "cuda", False, torch.float16),
        ("fp16", "cpu", True, torch.float16),
    ],
)
def test_the_dtype_follows_the_setting_and_the_device(setting, device_type, bf16, expected):
    assert choose_dtype(setting, device_type, bf16) == expected


@pytest.mark.parametrize(("setting", "bf16"), [("bf16", False), ("float8", True)])
def test_an_impossible_precision_fails_in_one_line(setting, bf16) -> None:
    with pytest.raises(PipelineError, match="precision"):
        choose_dtype(setting, "cuda", bf16)


def test_only_fp16_scales_the_loss() -> None:
    assert grad_scaler(torch.float16, CPU).is_enabled()
    assert not grad_scaler(torch.bfloat16, CPU).is_enabled()
    assert not grad_scaler(torch.float32, CPU).is_enabled()


@pytest.fixture
def restored_determinism(monkeypatch):
    """Undo what set_determinism sets: the flags, cudnn.benchmark and the cuBLAS setting."""
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    flags = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    benchmark = torch.backends.cudnn.benchmark
    yield
    torch.use_deterministic_algorithms(flags, warn_only=warn_only)
    torch.backends.cudnn.benchmark = benchmark


def test_the_determinism_setting_switches_the_process_both_ways(restored_determinism) -> None:
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.benchmark = True
    set_determinism(True, CPU)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.benchmark  # cuDNN and cuBLAS are left alone on CPU
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    set_determinism(False, CPU)
    assert not torch.are_deterministic_algorithms_enabled()
    cuda = torch.device("cuda")  # sets flags only: no GPU needed
    set_determinism(True, cuda)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()
    assert not torch.backends.cudnn.benchmark
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    set_determinism(False, cuda)
    assert not torch.are_deterministic_algorithms_enabled() and torch.backends.cudnn.benchmark


@pytest.mark.parametrize("deterministic", [True, False])
def test_train_applies_the_determinism_setting(
    tiny_model_cfg, tokenizer, restored_determinism, deterministic
) -> None:
    torch.use_deterministic_algorithms(not deterministic)
    rows = [{"input_ids": [101, 2000, 102]}] * 4
    settings = FinetuneConfig(
        epochs=1, batch_size=4, eval_batch_size=4, learning_rate=1e-3, warmup_ratio=0.0,
        weight_decay=0.0, grad_clip=1.0, log_every=1, checkpoint_every=0,
    )  # fmt: skip
    model = load_classifier(tiny_model_cfg, tokenizer, 2, seed=0)
    labels = np.array([0, 1, 0, 1])
    train(model, load_task("sst2"), rows, labels, settings, 0, 0, CPU, deterministic=deterministic)
    assert torch.are_deterministic_algorithms_enabled() == deterministic


@pytest.fixture(scope="module")
def model_and_batch(tiny_model_cfg, tokenizer):
    model = attach(load_classifier(tiny_model_cfg, tokenizer, 2, seed=0).eval())
    sentences = ["the film was a quiet delight .", "a long , boring and predictable plot"] * 4
    encodings = [tokenizer(s) for s in sentences]
    return model, encodings, tokenizer.pad_token_id


def logits_and_maps(model, encodings, pad_id, setting):
    batch = collate(encodings, pad_id, CPU)
    with torch.no_grad(), autocast(setting, CPU) as dtype:
        logits = model(**batch).logits.float()  # [B, C]
        maps = capture_maps(model, encodings, pad_id)  # per example [L, H, n, n]
    return dtype, logits, torch.cat([m.flatten() for m in maps])


def test_fp32_autocast_changes_nothing(model_and_batch) -> None:
    model, encodings, pad_id = model_and_batch
    batch = collate(encodings, pad_id, CPU)
    with torch.no_grad():
        plain = model(**batch).logits
    dtype, logits, _ = logits_and_maps(model, encodings, pad_id, "fp32")
    assert dtype == torch.float32 and torch.equal(logits, plain)


def test_bf16_moves_maps_and_logits_a_little(model_and_batch) -> None:
    """bf16 keeps 8 mantissa bits (relative step 2^-8 = 0.4%): the maps and logits move, by
    about that much, and every attention row still sums to one."""
    model, encodings, pad_id = model_and_batch
    _, logits32, maps32 = logits_and_maps(model, encodings, pad_id, "fp32")
    dtype, logits16, maps16 = logits_and_maps(model, encodings, pad_id, "bf16")
    assert dtype == torch.bfloat16
    map_error = (maps16 - maps32).abs().max().item()
    logit_error = (logits16 - logits32).abs().max().item()
    assert 0 < map_error < 0.02
    assert 0 < logit_error < 0.05 * logits32.abs().max().item() + 0.01


@pytest.mark.parametrize("setting", ["bf16", "fp16"])
def test_low_precision_training_keeps_float32_weights_and_follows_fp32(
    tiny_model_cfg, tokenizer, setting
) -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=40)
    rows = [{"input_ids": [101, 2000 + int(y), 102], "token_type_ids": [0] * 3} for y in labels]
    settings = FinetuneConfig(
        epochs=3, batch_size=8, eval_batch_size=16, learning_rate=1e-2, warmup_ratio=0.0,
        weight_decay=0.0, grad_clip=1.0, log_every=5, checkpoint_every=0,
    )  # fmt: skip
    curves, logits = {}, {}
    for name in ("fp32", setting):
        model = load_classifier(tiny_model_cfg, tokenizer, 2, seed=0)
        curves[name] = train(
            model, load_task("sst2"), rows, labels, settings, 0, 0, CPU, precision=name
        )
        assert all(p.dtype == torch.float32 for p in model.parameters())
        logits[name] = predict(model, rows, 16, 0, CPU, precision=name)  # [N, 2]
    low, exact = np.array(curves[setting])[:, 1], np.array(curves["fp32"])[:, 1]
    assert np.isfinite(low).all() and low[-1] < low[0]  # it learns
    assert np.abs(low - exact).max() < 0.05  # and stays near the float32 run
    assert logits[setting].dtype == np.float32
    assert np.abs(logits[setting] - logits["fp32"]).max() < 0.1


def test_the_model_stages_run_at_bf16_on_the_cpu(micro_stage, shared_data) -> None:
    """precision=bf16 runs the stages that compute under autocast (finetune, dump_attention,
    ablate) and those that read their outputs. ablate failed here while its pruning curve
    wrote bf16 logits into a float32 table."""
    from stages import ablate, dump_attention, finetune, gates, measures, prepare

    settings = {"precision": "bf16", "paths.shared_data": str(shared_data)}
    prepare.run(micro_stage(settings=settings))
    for stage in (finetune, dump_attention, ablate, gates, measures):
        stage.run(micro_stage("rte", settings))
    outputs = micro_stage().out_root
    for name in ("finetune", "dump_attention", "ablate", "gates", "measures"):
        assert (outputs / f"metrics/{name}/rte/seed42.json").exists(), name


def test_on_cpu_the_determinism_setting_changes_no_number(
    tiny_model_cfg, tokenizer, restored_determinism
) -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=24)
    rows = [
        {"input_ids": [101, *rng.integers(1000, 5000, size=n).tolist(), 102]}
        for n in rng.integers(3, 12, size=24)
    ]
    settings = FinetuneConfig(
        epochs=1, batch_size=8, eval_batch_size=8, learning_rate=1e-3, warmup_ratio=0.0,
        weight_decay=0.01, grad_clip=1.0, log_every=1, checkpoint_every=0,
    )  # fmt: skip
    weights = []
    for deterministic in (True, False):
        model = load_classifier(tiny_model_cfg, tokenizer, 2, seed=0)
        task = load_task("sst2")
        train(model, task, rows, labels, settings, 0, 0, CPU, deterministic=deterministic)
        weights.append(model.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.parametrize(
    ("profile", "deterministic", "compiled"),
    [
        ("quick", True, False),  # byte-identical reruns on one machine, on 2 CPU cores
        ("micro", True, False),
        ("standard", True, False),
        ("full", False, False),  # GPU-sized: fast kernels
        ("paper", False, True),
    ],
)
def test_each_profile_declares_its_determinism_and_compile_setting(
    profile, deterministic, compiled
) -> None:
    params = OmegaConf.create(compose_params([f"experiment={profile}"]))
    assert params.deterministic is deterministic
    assert params.compile.enabled is compiled and params.compile.pad_multiple == 8
