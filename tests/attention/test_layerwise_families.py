"""The layer-wise runner (ablation sweeps, gates) and the value-weighted norms on a tiny random
encoder of every family (tests/support/encoder_families.py), against the model's own forward pass
through the engine (itself checked against weight-surgery oracles in
tests/attention/test_engine_families.py) and a naive norms reference that never forms a Gram
matrix."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification

from pipeline.ablation.sweep import head_ablations, layer_ablations, sweep
from pipeline.attention.engine import HeadControl, attach
from pipeline.attention.families import layer_modules, output_projection, value_projection
from pipeline.attention.layerwise import Layerwise
from pipeline.attention.norms import value_grams
from pipeline.core.errors import PipelineError
from pipeline.data.encoding import collate
from tests.support.encoder_families import (
    FAMILIES,
    HEADS,
    LAYERS,
    LENGTHS,
    Family,
    eager_copy,
    make_batch,
    plain_model,
)

SHAPE = (LAYERS, HEADS)
BY_NAME = {f.name: f for f in FAMILIES}
LAYERWISE = ["bert", "bert-hooks", "roberta", "xlm-roberta", "electra", "distilbert", "albert"]
LAYERWISE += ["mpnet"]
REFUSED = {
    "modernbert": "rotary embeddings and sliding-window masks",
    "deberta-v3": "relative-position terms",
}
NORMS = [*LAYERWISE, *REFUSED]


def classifier(family: Family) -> torch.nn.Module:
    """The family's tiny random sequence classifier (2 labels, seeded, eval mode)."""
    torch.manual_seed(0)
    config = family.config()
    config.num_labels = 2
    return AutoModelForSequenceClassification.from_config(config).eval()


@pytest.fixture(scope="module", params=LAYERWISE)
def cut(request) -> tuple[Family, Layerwise]:
    family = BY_NAME[request.param]
    return family, Layerwise.of(attach(classifier(family), route=family.route))


def rows(pad_id: int) -> list[dict[str, list[int]]]:
    """The test batch's examples, unpadded."""
    batch = make_batch(pad_id, seed=3)
    return [{"input_ids": batch["input_ids"][b, :n].tolist()} for b, n in enumerate(LENGTHS)]


@torch.no_grad()
def forward_logits(model, examples, control_of) -> np.ndarray:
    """Logits [N, C] from the model's own forward pass, one example at a time."""
    out = []
    for row in examples:
        batch = {"input_ids": torch.tensor([row["input_ids"]])}
        out.append(model(**batch, head_control=control_of()).logits)
    return torch.cat(out).numpy()


@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_sweep_equals_the_models_own_forward(cut, mode):
    family, layerwise = cut
    examples = rows(family.pad_id)
    ablations = head_ablations(SHAPE) + layer_ablations(SHAPE)
    fast = sweep(
        layerwise, examples, ablations, mode=mode, pad_id=family.pad_id, batch_size=2,
        ablations_per_pass=3, progress=False,
    )  # fmt: skip
    model = layerwise.model
    np.testing.assert_allclose(
        fast.baseline, forward_logits(model, examples, HeadControl), atol=1e-5
    )
    for ablation, got in zip(ablations, fast.logits, strict=True):
        mask = ablation.mask(SHAPE)
        want = forward_logits(model, examples, lambda m=mask: HeadControl(disabled=m, mode=mode))
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=str(ablation))
    assert np.abs(fast.logits - fast.baseline).max() > 1e-3  # the ablations did something


def test_gated_pass_from_every_layer_equals_the_forward_with_its_gradients(cut):
    family, layerwise = cut
    model = layerwise.model
    batch = make_batch(family.pad_id, seed=4)
    gate = torch.linspace(0.3, 1.2, LAYERS * HEADS).view(SHAPE).requires_grad_(True)
    want = model(**batch, head_control=HeadControl(gate=gate)).logits  # [B, C]
    (want_grad,) = torch.autograd.grad(want.square().sum(), gate)
    hidden, mask = layerwise.embed(batch)
    states: list[torch.Tensor] = []
    got = layerwise.logits(hidden, mask, control=HeadControl(gate=gate), keep=states)
    (got_grad,) = torch.autograd.grad(got.square().sum(), gate)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=0)
    torch.testing.assert_close(got_grad, want_grad, atol=1e-5, rtol=1e-4)
    for start in range(1, LAYERS):  # a pass that starts higher up, from the cached input
        above = layerwise.logits(states[start], mask, start, HeadControl(gate=gate))
        torch.testing.assert_close(above, want, atol=1e-5, rtol=0)


def test_albert_pass_started_above_layer_one_tells_the_shared_module_its_layer():
    layerwise = Layerwise.of(attach(classifier(BY_NAME["albert"])))
    assert len(layerwise.shared[0]) == 1 and layerwise.shared[0] == layerwise.shared[2]
    batch = make_batch(0)
    hidden, mask = layerwise.embed(batch)
    states: list[torch.Tensor] = []
    with torch.no_grad():
        layerwise.logits(hidden, mask, keep=states)
        control = HeadControl(capture=[2])
        layerwise.logits(states[2], mask, 2, control)
    assert sorted(control.maps) == [2]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_family_that_cannot_run_layer_by_layer_is_refused_in_one_line(name):
    family = BY_NAME[name]
    model = attach(classifier(family), route=family.route)
    with pytest.raises(PipelineError, match=REFUSED[name]) as error:
        Layerwise.of(model)
    assert "\n" not in str(error.value)


def test_family_outside_the_table_is_refused_in_one_line():
    model = classifier(BY_NAME["bert"])
    model.config.model_type = "new-family"
    with pytest.raises(PipelineError, match=r"no layout known .* pipeline/attention/families\.py"):
        Layerwise.of(model)


def naive_norms(model, batch) -> list[torch.Tensor]:
    """Per layer, ||alpha_h[i, j] (x_j W_V^h + b_V^h) W_O^h|| [B, H, T, T] from the eager
    model's maps and its value projections' outputs, recorded by forward hooks (a shared
    projection is called once per layer, bottom-up)."""
    eager = eager_copy(model)
    values: list[torch.Tensor] = []
    sites = {id(value_projection(eager, i)[0]): value_projection(eager, i) for i in range(LAYERS)}
    handles = [
        linear.register_forward_hook(
            lambda _m, _a, out, start=start: values.append(out[..., start:])  # [B, T, >= H*D]
        )
        for linear, start in sites.values()
    ]
    with torch.no_grad():
        maps = eager(**batch, output_attentions=True).attentions  # L x [B, H, T, T]
    for handle in handles:
        handle.remove()
    norms = []
    for layer in range(LAYERS):
        weight = output_projection(eager, layer).weight  # [hidden, H*D]
        width = weight.shape[1] // HEADS
        value = values[layer][..., : weight.shape[1]]  # [B, T, H*D]
        per_head = []
        for head in range(HEADS):
            block = slice(head * width, (head + 1) * width)
            mapped = value[..., block] @ weight[:, block].T  # [B, T, hidden]: f_h(x_j)
            per_head.append(maps[layer][:, head] * mapped.norm(dim=-1)[:, None, :])
        norms.append(torch.stack(per_head, dim=1))
    return norms


@pytest.mark.parametrize("name", NORMS)
def test_value_weighted_norms_equal_the_naive_reference(name):
    family = BY_NAME[name]
    plain = plain_model(family)
    engine = attach(copy.deepcopy(plain), route=family.route)
    batch = make_batch(family.pad_id)
    control = HeadControl(
        capture=range(LAYERS), value_grams=value_grams(engine, list(range(LAYERS)))
    )
    with torch.no_grad():
        engine(**batch, head_control=control)
    want = naive_norms(plain, batch)
    for layer in range(LAYERS):
        for b, n in enumerate(LENGTHS):
            torch.testing.assert_close(
                control.norms[layer][b, :, :n, :n], want[layer][b, :, :n, :n], atol=1e-5, rtol=1e-4
            )


def test_layer_modules_follow_albert_groups():
    family = BY_NAME["albert"]
    model = plain_model(family)
    groups = model.encoder.albert_layer_groups
    assert list(layer_modules(model)) == [groups[0]] * LAYERS
    assert output_projection(model, 2) is groups[0].albert_layers[0].attention.dense


def test_norms_on_a_classifier_read_its_encoder():
    model = classifier(BY_NAME["distilbert"])
    assert output_projection(model, 1) is model.distilbert.transformer.layer[1].attention.out_lin
    batch = collate([{"input_ids": [5, 6, 7]}], 0)
    control = HeadControl(capture=[1], value_grams=value_grams(attach(model), [1]))
    with torch.no_grad():
        model(**batch, head_control=control)
    assert control.norms[1].shape == (1, HEADS, 3, 3)
