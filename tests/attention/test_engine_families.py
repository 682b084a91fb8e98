"""The engine on a tiny random encoder of every family, against eager attention, the
weight-surgery oracles of tests/support/encoder_families.py and finite differences."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import AlbertConfig, AutoModel, DebertaConfig

from pipeline.attention.engine import HeadControl, attach, head_mask, require_attached
from pipeline.attention.norms import value_grams
from pipeline.core.errors import PipelineError
from tests.support.encoder_families import (
    COMMON,
    FAMILIES,
    HEADS,
    LAYERS,
    LENGTHS,
    Family,
    eager_copy,
    make_batch,
    oracle,
    plain_model,
)

ATOL = 1e-6
OUT_ATOL = 1e-5  # hidden states after 3 layers and layer norms
PER_LAYER = [(0, 1), (1, 0), (1, 3), (2, 2)]  # (layer, head) pairs disabled by the tests


@pytest.fixture(scope="module", params=FAMILIES, ids=[f.name for f in FAMILIES])
def setup(request):
    """(family, plain model, attached copy, batch)."""
    family: Family = request.param
    plain = plain_model(family)
    engine = attach(copy.deepcopy(plain), route=family.route)
    return family, plain, engine, make_batch(family.pad_id)


def hidden(model, batch, control=None) -> torch.Tensor:
    """Last hidden states [B, T, D]."""
    extra = {"head_control": control} if control is not None else {}
    with torch.no_grad():
        return model(**batch, **extra).last_hidden_state


def assert_real_close(got: torch.Tensor, want: torch.Tensor, atol: float = OUT_ATOL) -> None:
    """Equal on every example's real tokens ([B, T, ...] tensors)."""
    for b, n in enumerate(LENGTHS):
        torch.testing.assert_close(got[b, :n], want[b, :n], atol=atol, rtol=0)


def disabled_pattern(family: Family, mode: str) -> torch.Tensor:
    """bool [L, H]: heads in several layers, or one head in every layer where the uniform
    oracle cannot act on one layer alone (MPNet)."""
    if mode == "uniform" and not family.per_layer_uniform:
        disabled = torch.zeros(LAYERS, HEADS, dtype=torch.bool)
        disabled[:, 1] = True
        return disabled
    return head_mask((LAYERS, HEADS), heads=PER_LAYER)


def test_capture_equals_eager_output_attentions(setup):
    _, plain, engine, batch = setup
    with torch.no_grad():
        reference = eager_copy(plain)(**batch, output_attentions=True).attentions  # L x [B,H,T,T]
    control = HeadControl(capture=range(LAYERS))
    hidden(engine, batch, control)
    assert sorted(control.maps) == list(range(LAYERS))
    for layer in range(LAYERS):
        for b, n in enumerate(LENGTHS):
            got, want = control.maps[layer][b, :, :n, :n], reference[layer][b, :, :n, :n]
            torch.testing.assert_close(got, want, atol=ATOL, rtol=0)


def test_nothing_disabled_equals_the_plain_model(setup):
    _, plain, engine, batch = setup
    require_attached(engine)
    with pytest.raises(PipelineError, match=r"call pipeline\.attention\.engine\.attach"):
        require_attached(plain)
    want = hidden(plain, batch)
    assert_real_close(hidden(engine, batch), want)
    assert_real_close(hidden(engine, batch, HeadControl()), want)
    assert_real_close(hidden(engine, batch, HeadControl(capture=range(LAYERS))), want)


@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_disabling_equals_the_weight_surgery_oracle(setup, mode):
    family, plain, engine, batch = setup
    disabled = disabled_pattern(family, mode)
    edited = oracle(family, plain, disabled, mode)
    with torch.no_grad():
        want = edited(**batch, output_attentions=True)
    got = hidden(engine, batch, HeadControl(disabled=disabled, mode=mode))
    assert_real_close(got, want.last_hidden_state)
    assert (got - hidden(plain, batch)).abs().max() > 1e-3  # the heads did matter
    if mode == "uniform":  # a captured uniform head shows the map it used
        control = HeadControl(disabled=disabled, capture=range(LAYERS))
        assert_real_close(hidden(engine, batch, control), want.last_hidden_state)
        for layer in range(LAYERS):
            for b, n in enumerate(LENGTHS):
                got_map = control.maps[layer][b, disabled[layer], :n, :n]
                torch.testing.assert_close(
                    got_map, want.attentions[layer][b, disabled[layer], :n, :n], atol=ATOL, rtol=0
                )


def test_gate_gradients_match_finite_differences(setup):
    _, _, engine, batch = setup
    model = copy.deepcopy(engine).double()
    real = batch["attention_mask"].bool()  # [B, T]

    def loss_at(gate: torch.Tensor) -> torch.Tensor:
        output = model(**batch, head_control=HeadControl(gate=gate)).last_hidden_state
        return output[real].square().sum()

    gate = torch.full((LAYERS, HEADS), 0.9, dtype=torch.float64, requires_grad=True)
    loss_at(gate).backward()
    assert torch.all(gate.grad != 0)
    step = 1e-4  # loss ~700, gradients down to 1e-4: a 1e-6 step drowns in float64 rounding
    with torch.no_grad():
        for layer, head in [(0, 2), (1, 1), (2, 3)]:
            bumped, lowered = gate.detach().clone(), gate.detach().clone()
            bumped[layer, head] += step
            lowered[layer, head] -= step
            numeric = (loss_at(bumped) - loss_at(lowered)) / (2 * step)
            torch.testing.assert_close(gate.grad[layer, head], numeric, atol=1e-7, rtol=1e-4)


def test_gate_of_zero_equals_zero_mode(setup):
    _, _, engine, batch = setup
    disabled = head_mask((LAYERS, HEADS), heads=PER_LAYER)
    gated = hidden(engine, batch, HeadControl(gate=(~disabled).float()))
    zeroed = hidden(engine, batch, HeadControl(disabled=disabled, mode="zero"))
    assert_real_close(gated, zeroed, atol=ATOL)


@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_padding_changes_nothing_for_the_real_tokens(setup, mode):
    family, _, engine, batch = setup
    disabled = disabled_pattern(family, mode)
    gate = torch.linspace(0.5, 1.5, LAYERS * HEADS).view(LAYERS, HEADS)

    def control() -> HeadControl:
        return HeadControl(disabled=disabled, mode=mode, gate=gate, capture=range(LAYERS))

    together = control()
    padded = hidden(engine, batch, together)
    for b, n in enumerate(LENGTHS):
        alone = control()
        row = {"input_ids": batch["input_ids"][b : b + 1, :n]}
        torch.testing.assert_close(
            hidden(engine, row, alone)[0], padded[b, :n], atol=OUT_ATOL, rtol=0
        )
        for layer in range(LAYERS):
            torch.testing.assert_close(
                alone.maps[layer][0], together.maps[layer][b, :, :n, :n], atol=ATOL, rtol=0
            )


def test_per_example_disabling_equals_each_example_alone(setup):
    _, plain, engine, batch = setup
    disabled = torch.zeros(len(LENGTHS), LAYERS, HEADS, dtype=torch.bool)  # [B, L, H]
    disabled[0, 0, 1] = True
    disabled[2, 1] = True
    got = hidden(engine, batch, HeadControl(disabled=disabled))
    torch.testing.assert_close(got[1], hidden(plain, batch)[1], atol=OUT_ATOL, rtol=0)
    for b in (0, 2):
        alone = hidden(engine, batch, HeadControl(disabled=disabled[b]))
        torch.testing.assert_close(got[b], alone[b], atol=OUT_ATOL, rtol=0)


def test_albert_shared_module_gets_each_layer_in_turn():
    family = next(f for f in FAMILIES if f.name == "albert")
    engine = attach(plain_model(family))
    shared = engine.encoder.albert_layer_groups[0].albert_layers[0].attention
    assert shared.attention_engine_layers == (0, 1, 2)
    control = HeadControl(capture=[1])
    batch = make_batch(family.pad_id)
    for _ in range(2):  # a control reused across passes counts each pass afresh
        hidden(engine, batch, control)
    assert list(control.maps) == [1]


def test_albert_with_inner_groups_is_refused():
    config = AlbertConfig(**COMMON, embedding_size=16, inner_group_num=2)
    with pytest.raises(PipelineError, match="6 attention-interface calls in one pass for its 3"):
        attach(AutoModel.from_config(config))


def test_norms_of_both_paths_agree_with_gates_and_zeroed_heads():
    """The hook path records the same value-weighted norms as the interface path, scaled by
    the gates and 0 for zero-disabled heads (the naive reference, unscaled, is in
    tests/attention/test_layerwise_families.py)."""
    family = next(f for f in FAMILIES if f.name == "bert")
    plain = plain_model(family)
    batch = make_batch(family.pad_id)
    gate = torch.linspace(0.5, 1.5, LAYERS * HEADS).view(LAYERS, HEADS)
    disabled = head_mask((LAYERS, HEADS), heads=PER_LAYER)
    norms = {}
    for route in ("auto", "hooks"):
        engine = attach(copy.deepcopy(plain), route=route)
        control = HeadControl(
            disabled=disabled, mode="zero", gate=gate, capture=range(LAYERS),
            capture_heads=[0, 1, 3], value_grams=value_grams(engine, list(range(LAYERS))),
        )  # fmt: skip
        hidden(engine, batch, control)
        norms[route] = control.norms
    for layer in range(LAYERS):
        assert norms["hooks"][layer].shape == (len(LENGTHS), 3, 9, 9)
        torch.testing.assert_close(norms["hooks"][layer], norms["auto"][layer], atol=1e-5, rtol=0)
    assert float(norms["hooks"][0][:, 1].abs().max()) == 0.0  # (layer 1, head 2) zeroed
    assert float(norms["hooks"][2][:, 2].abs().max()) > 0.0  # head 4 of layer 3 kept


def mpnet_one_layer_reference(model, layer: int, head: int):
    """An eager copy of MPNet `model` whose head `head` of layer `layer` (0-based) attends
    uniformly: its query and key rows set to 0, and its slice of the shared relative position
    bias set to 0 where that layer's attention receives it (a pre-hook on the layer's
    self-attention edits its input), so its scores are all equal there and nowhere else."""
    edited = eager_copy(model)
    attention = edited.encoder.layer[layer].attention.attn
    width = edited.config.hidden_size // HEADS
    rows = slice(head * width, (head + 1) * width)
    with torch.no_grad():
        for linear in (attention.q, attention.k):
            linear.weight[rows] = 0.0
            linear.bias[rows] = 0.0

    def zero_bias(_module, args):
        hidden_states, mask, bias = args[:3]  # bias [B, H, T, T], shared by the layers
        bias = bias.clone()
        bias[:, head] = 0.0
        return (hidden_states, mask, bias, *args[3:])

    attention.register_forward_pre_hook(zero_bias)
    return edited


def test_mpnet_uniform_head_in_one_layer_equals_a_reference():
    family = next(f for f in FAMILIES if f.name == "mpnet")
    plain = plain_model(family)
    engine = attach(copy.deepcopy(plain))
    batch = make_batch(family.pad_id)
    for layer, head in [(0, 1), (1, 3)]:
        with torch.no_grad():
            want = mpnet_one_layer_reference(plain, layer, head)(**batch, output_attentions=True)
        disabled = head_mask((LAYERS, HEADS), heads=[(layer, head)])
        control = HeadControl(disabled=disabled, capture=range(LAYERS))
        got = hidden(engine, batch, control)
        assert_real_close(got, want.last_hidden_state)
        assert (got - hidden(plain, batch)).abs().max() > 1e-3  # the head did matter
        for b, n in enumerate(LENGTHS):  # its map is uniform in that layer only
            for captured in range(LAYERS):
                torch.testing.assert_close(
                    control.maps[captured][b, :, :n, :n],
                    want.attentions[captured][b, :, :n, :n],
                    atol=ATOL,
                    rtol=0,
                )
            torch.testing.assert_close(
                control.maps[layer][b, head, :n, :n], torch.full((n, n), 1 / n), atol=ATOL, rtol=0
            )


def test_family_without_interface_or_hook_sites_is_refused():
    model = AutoModel.from_config(DebertaConfig(**COMMON))  # DeBERTa v1: fused in_proj
    with pytest.raises(PipelineError, match=r"\(deberta\) neither calls .* nor has hook sites"):
        attach(model)
