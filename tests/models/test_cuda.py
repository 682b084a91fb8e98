"""The CUDA path, on a GPU: fine-tuning (float32 against the CPU, repeats and resumes bit for
bit, bf16 and fp16 with loss scaling), the attention engine against eager attention, the
ablation sweep against the naive loop, and the micro profile's model stages on `device=cuda`
against the same stages on the CPU. Skipped where no GPU is visible, as in CI."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.ablation.sweep import head_ablations, layer_ablations, sweep
from pipeline.attention.engine import HeadControl, attach
from pipeline.attention.layerwise import Layerwise
from pipeline.attention.store import AttentionStore, store_path
from pipeline.models.checkpoints import Checkpoints
from pipeline.models.training import predict
from stages import ablate, dump_attention, finetune, gates, measures, prepare
from tests.support.ablation_models import SHAPE, seven_rows, strong_classifier
from tests.support.builders import micro_run, tiny_bert
from tests.support.engine_batches import LENGTHS, crop_maps, make_batch
from tests.support.engine_batches import SHAPE as ENGINE_SHAPE
from tests.support.oracles.naive_ablation import naive_sweep
from tests.support.training_runs import Killed, kill_after, random_rows, same_weights
from tests.support.training_runs import fresh_model as resume_model
from tests.support.training_runs import run as fit

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the CUDA path needs a GPU"
)
CPU, CUDA = torch.device("cpu"), torch.device("cuda")


@pytest.fixture(scope="module")
def data():
    return random_rows()


def fresh_model(tiny_model_cfg, tokenizer, dropout: bool = True):
    """test_resume's tiny random classifier; without dropout, CPU and CUDA train the same
    function (their random streams differ, so their dropout masks would too)."""
    model = resume_model(tiny_model_cfg, tokenizer)
    if not dropout:
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
    return model


def largest_difference(first, second) -> float:
    a, b = first.state_dict(), second.state_dict()
    return max((a[k].cpu().float() - b[k].cpu().float()).abs().max().item() for k in a)


def test_float32_fine_tuning_on_cuda_follows_the_cpu(tiny_model_cfg, tokenizer, data):
    start = fresh_model(tiny_model_cfg, tokenizer, dropout=False)
    on_cpu, on_cuda = copy.deepcopy(start), copy.deepcopy(start)
    cpu_curve = fit(on_cpu, data, device=CPU)
    cuda_curve = fit(on_cuda, data, device=CUDA)
    assert largest_difference(on_cpu, start) > 1e-3  # the runs really trained
    # Adam steps each weight by about the learning rate (1e-3) whatever its gradient's size,
    # so a weight whose tiny gradient rounds differently may move apart by up to a step; the
    # model's outputs may not.
    assert largest_difference(on_cuda, on_cpu) < 1e-3
    np.testing.assert_allclose(
        [loss for _, loss in cuda_curve], [loss for _, loss in cpu_curve], rtol=0, atol=1e-4
    )
    rows = data[0]
    np.testing.assert_allclose(
        predict(on_cuda, rows, 8, 0, CUDA), predict(on_cpu, rows, 8, 0, CPU), rtol=0, atol=1e-4
    )


def test_cuda_fine_tuning_repeats_bit_for_bit(tiny_model_cfg, tokenizer, data):
    first, second = fresh_model(tiny_model_cfg, tokenizer), fresh_model(tiny_model_cfg, tokenizer)
    assert fit(first, data, device=CUDA) == fit(second, data, device=CUDA)
    assert same_weights(first, second)


@pytest.mark.parametrize("kill_at", [3, 11])  # before the first checkpoint, and after it
def test_a_killed_cuda_run_resumes_to_the_uninterrupted_result(
    tiny_model_cfg, tokenizer, data, tmp_path, monkeypatch, kill_at
):
    uninterrupted = fresh_model(tiny_model_cfg, tokenizer)
    expected_curve = fit(uninterrupted, data, device=CUDA)
    checkpoints = Checkpoints(tmp_path / "ckpt", every=5, fingerprint="run")
    with monkeypatch.context() as patch:
        kill_after(patch, kill_at)
        with pytest.raises(Killed):
            fit(fresh_model(tiny_model_cfg, tokenizer), data, checkpoints=checkpoints, device=CUDA)
    resumed = fresh_model(tiny_model_cfg, tokenizer)
    assert fit(resumed, data, checkpoints=checkpoints, device=CUDA) == expected_curve
    assert same_weights(resumed, uninterrupted)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_low_precision_fine_tuning_on_cuda_follows_float32(
    tiny_model_cfg, tokenizer, data, precision
):
    start = fresh_model(tiny_model_cfg, tokenizer, dropout=False)
    full, low = copy.deepcopy(start), copy.deepcopy(start)
    full_curve = fit(full, data, device=CUDA)
    low_curve = fit(low, data, device=CUDA, precision=precision)
    assert all(p.dtype == torch.float32 for p in low.parameters())
    difference = np.abs(np.array(low_curve) - np.array(full_curve))[:, 1]
    assert difference.max() < 0.05
    assert largest_difference(low, full) > 0  # autocast really ran in the low dtype
    rows = data[0]
    full_logits = predict(full, rows, 8, 0, CUDA)
    low_logits = predict(low, rows, 8, 0, CUDA, precision=precision)
    assert np.abs(low_logits - full_logits).max() < 0.05


def test_engine_maps_on_cuda_equal_eager_attentions():
    plain = tiny_bert(**ENGINE_SHAPE)
    eager = copy.deepcopy(plain).to(CUDA)
    eager.set_attn_implementation("eager")
    engine = attach(copy.deepcopy(plain)).to(CUDA)
    batch = {key: value.to(CUDA) for key, value in make_batch().items()}
    control = HeadControl(capture=range(3))
    with torch.no_grad():
        reference = eager(**batch, output_attentions=True).attentions  # L x [B, H, T, T]
        engine(**batch, head_control=control)
    for layer in range(3):
        got, want = crop_maps(control.maps[layer], LENGTHS), crop_maps(reference[layer], LENGTHS)
        for g, w in zip(got, want, strict=True):
            assert g.device.type == "cuda"
            torch.testing.assert_close(g, w, atol=1e-6, rtol=0)


def test_sweep_on_cuda_equals_the_naive_loop_and_the_cpu(tiny_model_cfg, tokenizer):
    model, examples = strong_classifier(tiny_model_cfg, tokenizer), seven_rows()
    ablations = head_ablations(SHAPE) + layer_ablations(SHAPE)
    settings = dict(mode="uniform", pad_id=0, batch_size=3, progress=False)
    on_cpu = sweep(Layerwise.of(attach(copy.deepcopy(model))), examples, ablations, **settings)
    on_gpu = Layerwise.of(attach(model).to(CUDA))
    on_cuda = sweep(on_gpu, examples, ablations, **settings)
    masks = [a.mask(SHAPE) for a in ablations]
    baseline, logits = naive_sweep(on_gpu.model, examples, masks, **settings)
    np.testing.assert_allclose(on_cuda.baseline, baseline, atol=1e-5)
    np.testing.assert_allclose(on_cuda.logits, logits, atol=1e-5)
    np.testing.assert_allclose(on_cuda.logits, on_cpu.logits, atol=1e-4)
    assert np.abs(logits - baseline).max() > 0.05  # the ablations change the output


# --- the stages ---------------------------------------------------------------------------


def on_device(outputs: Path, data: Path, shared_data: Path, device: str, precision="fp32"):
    """One RTE stage run of the micro profile on `device`, as DVC runs it."""
    settings = {"paths.shared_data": str(shared_data), "device": device, "precision": precision}
    return micro_run(data, outputs, "rte", settings)


def numbers(path: Path) -> dict[str, float]:
    return {k: v for k, v in json.loads(path.read_text()).items() if isinstance(v, int | float)}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, shared_data) -> tuple[Path, Path]:
    """(data, outputs): RTE prepared for the micro profile, and a model fine-tuned on CUDA at
    the GPU's default precision (`auto`: bf16 where the GPU has it)."""
    root = tmp_path_factory.mktemp("cuda")
    data, outputs = root / "data", root / "outputs"
    prepare.run(on_device(outputs, data, shared_data, "cpu"))
    finetune.run(on_device(outputs, data, shared_data, "cuda", "auto"))
    return data, outputs


def test_cuda_fine_tuning_stage_repeats_bit_for_bit(prepared, shared_data, tmp_path):
    data, outputs = prepared
    finetune.run(on_device(tmp_path, data, shared_data, "cuda", "auto"))
    model_file = Path("models/rte/seed42/model.safetensors")
    assert (tmp_path / model_file).read_bytes() == (outputs / model_file).read_bytes()


def test_model_stages_on_cuda_match_the_cpu_on_the_same_weights(prepared, shared_data, tmp_path):
    data, trained = prepared
    on_cuda, on_cpu = tmp_path / "cuda", tmp_path / "cpu"
    for outputs, device in ((on_cuda, "cuda"), (on_cpu, "cpu")):
        shutil.copytree(trained / "models", outputs / "models")
        dump_attention.run(on_device(outputs, data, shared_data, device))
        ablate.run(on_device(outputs, data, shared_data, device))
    cuda_store = AttentionStore(store_path(on_cuda / "attention", "rte", 42))
    cpu_store = AttentionStore(store_path(on_cpu / "attention", "rte", 42))
    for variant in ("finetuned", "pretrained"):
        cuda_maps, cpu_maps = cuda_store.maps(variant, "rte"), cpu_store.maps(variant, "rte")
        assert cuda_maps.keys() == cpu_maps.keys()
        for example, maps in cpu_maps.items():  # float16 store: one rounding step apart at most
            np.testing.assert_allclose(cuda_maps[example], maps, rtol=0, atol=1e-3)
    cuda_metrics = numbers(on_cuda / "metrics/ablate/rte/seed42.json")
    cpu_metrics = numbers(on_cpu / "metrics/ablate/rte/seed42.json")
    assert cuda_metrics.keys() == cpu_metrics.keys()
    for key, value in cpu_metrics.items():
        assert cuda_metrics[key] == pytest.approx(value, abs=1e-4), key


def test_model_stages_run_on_cuda_at_the_default_precision(prepared, shared_data, tmp_path):
    data, trained = prepared
    shutil.copytree(trained / "models", tmp_path / "models")
    for stage in (dump_attention, ablate, gates, measures):
        stage.run(on_device(tmp_path, data, shared_data, "cuda", "auto"))
    for stage in ("dump_attention", "ablate", "gates", "measures"):
        values = numbers(tmp_path / f"metrics/{stage}/rte/seed42.json")
        assert values and all(math.isfinite(v) for v in values.values()), stage
