"""The attention engine against eager attention, hand-written references and the plain model."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import RobertaConfig
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.models.bert.modeling_bert import BertSelfAttention

from pipeline.attention.engine import (
    HeadControl,
    attach,
    engine_attention,
    head_mask,
    model_shape,
    require_attached,
)
from pipeline.core.errors import PipelineError
from tests.support.builders import tiny_bert
from tests.support.engine_batches import LENGTHS, SHAPE, crop_maps, make_batch

ATOL = 1e-6


@pytest.fixture(scope="module")
def plain():
    """A tiny random BERT classifier running SDPA, in eval mode."""
    return tiny_bert(**SHAPE)


@pytest.fixture(scope="module")
def engine(plain):
    """The same weights, attached to the engine."""
    return attach(copy.deepcopy(plain))


@pytest.fixture(scope="module")
def batch():
    return make_batch()


def assert_differs(got: torch.Tensor, plain: torch.Tensor) -> None:
    """`got` is not `plain` up to rounding: the intervention changed something."""
    assert (got - plain).abs().max() > 1e-3 * plain.abs().max()


def logits(model, batch, control=None):
    with torch.no_grad():
        return model(**batch, head_control=control).logits if control else model(**batch).logits


def test_captured_maps_equal_eager_output_attentions(plain, engine, batch):
    eager = copy.deepcopy(plain)
    eager.set_attn_implementation("eager")
    with torch.no_grad():
        reference = eager(**batch, output_attentions=True).attentions  # L x [B, H, T, T]
    control = HeadControl(capture=range(3))
    logits(engine, batch, control)
    for layer in range(3):
        got = crop_maps(control.maps[layer], LENGTHS)
        want = crop_maps(reference[layer], LENGTHS)
        for g, w, n in zip(got, want, LENGTHS, strict=True):
            assert g.shape == (4, n, n)
            torch.testing.assert_close(g, w, atol=ATOL, rtol=0)
            torch.testing.assert_close(g.sum(-1), torch.ones(4, n), atol=ATOL, rtol=0)


def test_capture_chosen_heads_only(engine, batch):
    control = HeadControl(capture=[1], capture_heads=[3, 0])
    logits(engine, batch, control)
    full = HeadControl(capture=[1])
    logits(engine, batch, full)
    assert list(control.maps) == [1]
    assert torch.equal(control.maps[1], full.maps[1][:, [3, 0]])


def test_nothing_disabled_equals_plain_sdpa_model(plain, engine, batch):
    want = logits(plain, batch)
    torch.testing.assert_close(logits(engine, batch), want, atol=ATOL, rtol=0)
    torch.testing.assert_close(logits(engine, batch, HeadControl()), want, atol=ATOL, rtol=0)
    captured = HeadControl(capture=range(3))  # the eager path, nothing disabled
    torch.testing.assert_close(logits(engine, batch, captured), want, atol=1e-5, rtol=0)


def random_attention_inputs(seed: int = 0):
    """q, k, v [2, 3, 5, 4] and a bool key mask [2, 1, 5, 5] with lengths 5 and 3."""
    generator = torch.Generator().manual_seed(seed)
    query, key, value = (torch.randn(2, 3, 5, 4, generator=generator) for _ in range(3))
    real = torch.arange(5)[None] < torch.tensor([5, 3])[:, None]  # [2, 5]
    mask = real[:, None, None, :].expand(2, 1, 5, 5)
    return query, key, value, mask, real


class LayerStub(torch.nn.Module):
    attention_engine_layers = (0,)  # what attach() maps: the module computes layer 0
    training = False


def test_uniform_disabling_equals_hand_written_reference():
    query, key, value, mask, real = random_attention_inputs()
    disabled = torch.tensor([[False, True, False]])  # head 1 of layer 0
    for capture in ((), (0,)):
        control = HeadControl(disabled=disabled, mode="uniform", capture=capture)
        output, _ = engine_attention(LayerStub(), query, key, value, mask, head_control=control)
        # by hand: every query gives 1/n to each of the n real keys
        for b, n in enumerate((5, 3)):
            uniform = torch.zeros(5, 5)
            uniform[:, :n] = 1.0 / n
            scores = query[b] @ key[b].transpose(1, 2) / 2.0  # [3, 5, 5], scaling 1/sqrt(4)
            scores = scores.masked_fill(~real[b][None, None], float("-inf"))
            probs = torch.softmax(scores, -1)
            probs[1] = uniform
            want = (probs @ value[b]).transpose(0, 1)  # [5, 3, 4]
            torch.testing.assert_close(output[b], want, atol=ATOL, rtol=0)
            if capture:
                torch.testing.assert_close(control.maps[0][b], probs, atol=ATOL, rtol=0)


def test_zero_mode_zeroes_only_the_disabled_head():
    query, key, value, mask, _ = random_attention_inputs()
    disabled = torch.tensor([[False, True, False]])
    control = HeadControl(disabled=disabled, mode="zero")
    output, _ = engine_attention(LayerStub(), query, key, value, mask, head_control=control)
    plain, _ = sdpa_attention_forward(LayerStub(), query, key, value, mask, scaling=0.5)
    assert torch.all(output[:, :, 1] == 0)
    torch.testing.assert_close(output[:, :, [0, 2]], plain[:, :, [0, 2]], atol=ATOL, rtol=0)


@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_all_heads_of_a_layer_equal_layer_disabling(plain, engine, batch, mode):
    shape = model_shape(engine)
    every_head = head_mask(shape, heads=[(1, h) for h in range(shape[1])])
    whole_layer = head_mask(shape, layers=[1])
    assert torch.equal(every_head, whole_layer)
    fast = logits(engine, batch, HeadControl(disabled=whole_layer, mode=mode))
    # capturing layer 1 sends it down the per-head path instead of the whole-layer shortcut
    per_head = logits(engine, batch, HeadControl(disabled=every_head, mode=mode, capture=[1]))
    torch.testing.assert_close(fast, per_head, atol=1e-5, rtol=0)
    assert_differs(fast, logits(plain, batch))


def test_uniform_layer_capture_is_uniform_on_real_tokens(engine, batch):
    control = HeadControl(disabled=head_mask(model_shape(engine), layers=[2]), capture=[2])
    logits(engine, batch, control)
    for maps, n in zip(crop_maps(control.maps[2], LENGTHS), LENGTHS, strict=True):
        torch.testing.assert_close(maps, torch.full((4, n, n), 1.0 / n), atol=ATOL, rtol=0)
    assert torch.all(control.maps[2][1, :, :, LENGTHS[1] :] == 0)  # no weight on padding


def test_gate_of_one_changes_nothing_and_zero_equals_zero_mode(plain, engine, batch):
    shape = model_shape(engine)
    ones = torch.ones(shape)
    torch.testing.assert_close(
        logits(engine, batch, HeadControl(gate=ones)), logits(plain, batch), atol=ATOL, rtol=0
    )
    disabled = head_mask(shape, heads=[(0, 1), (2, 3), (2, 0)])
    gated = logits(engine, batch, HeadControl(gate=(~disabled).float()))
    zeroed = logits(engine, batch, HeadControl(disabled=disabled, mode="zero"))
    torch.testing.assert_close(gated, zeroed, atol=ATOL, rtol=0)


def test_per_example_gate_equals_per_example_zero_mode(plain, engine, batch):
    shape = model_shape(engine)
    disabled = torch.zeros(3, *shape, dtype=torch.bool)  # [B, L, H]
    disabled[0, 1, 2] = True
    disabled[2, 0] = True
    gated = logits(engine, batch, HeadControl(gate=(~disabled).float()))
    zeroed = logits(engine, batch, HeadControl(disabled=disabled, mode="zero"))
    torch.testing.assert_close(gated, zeroed, atol=ATOL, rtol=0)
    torch.testing.assert_close(gated[1], logits(plain, batch)[1], atol=ATOL, rtol=0)
    assert_differs(gated[0], logits(plain, batch)[0])


def test_gradient_reaches_the_gate_and_matches_finite_differences(engine, batch):
    def loss_at(gate):
        return engine(**batch, head_control=HeadControl(gate=gate)).logits.square().sum()

    gate = torch.ones(model_shape(engine), dtype=torch.float64, requires_grad=True)
    engine.double()
    try:
        loss_at(gate).backward()
        assert gate.grad is not None and torch.all(gate.grad != 0)
        step = 1e-6
        with torch.no_grad():
            for layer, head in [(0, 2), (2, 1)]:
                bumped = gate.detach().clone()
                bumped[layer, head] += step
                lowered = gate.detach().clone()
                lowered[layer, head] -= step
                numeric = (loss_at(bumped) - loss_at(lowered)) / (2 * step)
                torch.testing.assert_close(gate.grad[layer, head], numeric, atol=1e-6, rtol=1e-5)
    finally:
        engine.float()


def test_per_example_masks(plain, engine, batch):
    shape = model_shape(engine)
    disabled = torch.zeros(3, *shape, dtype=torch.bool)  # [B, L, H]
    disabled[0, 0, 1] = True
    disabled[2] = head_mask(shape, layers=[1])
    got = logits(engine, batch, HeadControl(disabled=disabled))
    torch.testing.assert_close(got[1], logits(plain, batch)[1], atol=ATOL, rtol=0)
    for b in (0, 2):
        alone = logits(engine, batch, HeadControl(disabled=disabled[b]))
        torch.testing.assert_close(got[b], alone[b], atol=1e-5, rtol=0)
        assert_differs(got[b], logits(plain, batch)[b])


def test_roberta_tiny_random_works():
    shape = {**SHAPE, "positions": 40}  # RoBERTa's positions start after its pad id
    plain = tiny_bert(**shape, family=RobertaConfig, classifier=False, pad_token_id=1)
    engine = attach(copy.deepcopy(plain))
    eager = copy.deepcopy(plain)
    eager.set_attn_implementation("eager")
    batch = make_batch(pad_id=1)
    with torch.no_grad():
        reference = eager(**batch, output_attentions=True).attentions
        control = HeadControl(capture=[0, 2])
        engine(**batch, head_control=control)
        want = plain(**batch).last_hidden_state
        got = engine(**batch).last_hidden_state
    torch.testing.assert_close(got, want, atol=1e-5, rtol=0)
    for layer in (0, 2):
        for g, w in zip(
            crop_maps(control.maps[layer], LENGTHS),
            crop_maps(reference[layer], LENGTHS),
            strict=True,
        ):
            torch.testing.assert_close(g, w, atol=ATOL, rtol=0)


def test_out_of_range_head_error_gives_the_model_shape():
    with pytest.raises(PipelineError, match="3 layers x 4 heads"):
        head_mask((3, 4), heads=[(1, 4)])
    with pytest.raises(PipelineError, match="layer 3, head 0 is out of range"):
        head_mask((3, 4), layers=[3])


def test_unattached_model_is_refused(plain, engine):
    require_attached(engine)
    with pytest.raises(PipelineError, match=r"call pipeline\.attention\.engine\.attach"):
        require_attached(plain)


def test_bad_mode_is_refused():
    with pytest.raises(PipelineError, match="uniform or zero"):
        HeadControl(mode="half")


class EagerSelfAttention(BertSelfAttention):
    """A self-attention that computes its own softmax instead of calling the interface."""

    def forward(self, hidden_states, attention_mask=None, **kwargs):
        shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
        query, key, value = (
            layer(hidden_states).view(shape).transpose(1, 2)
            for layer in (self.query, self.key, self.value)
        )
        probs = torch.softmax(query @ key.transpose(2, 3) * self.scaling, -1)  # [B, H, T, T]
        output = (probs @ value).transpose(1, 2)
        return output.reshape(*hidden_states.shape[:-1], -1), probs


def test_model_whose_attention_skips_the_interface_is_refused(plain):
    model = copy.deepcopy(plain)
    layer = model.bert.encoder.layer[1].attention
    replacement = EagerSelfAttention(model.config, layer_idx=1)
    replacement.load_state_dict(layer.self.state_dict())
    layer.self = replacement
    with pytest.raises(PipelineError, match="2 attention-interface calls in one pass for its 3"):
        attach(model)
