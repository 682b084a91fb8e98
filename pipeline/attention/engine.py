"""The attention engine: one attention function registered with transformers' AttentionInterface.

Every self-attention module of a BERT-family model in transformers 5 calls
`ALL_ATTENTION_FUNCTIONS[config._attn_implementation](module, query, key, value, mask, **kwargs)`,
and keyword arguments given to the model's forward reach that call. After `attach(model)`, a
`HeadControl` passed as `model(**batch, head_control=control)` lets one forward pass

- capture the attention probabilities of chosen layers and heads;
- disable chosen heads, per batch ([L, H]) or per example ([B, L, H]), in two modes:
  `uniform` (Kovaleva et al.: every query gives 1/n to each of the n real tokens, [CLS]
  and [SEP] included) or `zero` (Michel et al.: the head's output is multiplied by 0);
- scale each head's output by a differentiable gate, [L, H] or per example [B, L, H]
  (Michel et al.'s xi_h; per-example gates give per-example gradients);
- with `value_grams` (pipeline/attention/norms.py), capture beside the probabilities the
  value-weighted norms ||alpha_h[i, j] f_h(x_j)|| of Kobayashi et al. (2020), scaled like the
  head's output by its gate (0 for a zero-disabled head).

Layers that are neither captured nor touched run transformers' SDPA path unchanged. A layer
whose heads are all uniform-disabled skips the attention scores entirely: its output is the
mean of the values over the real tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import torch
from transformers import AttentionInterface, PreTrainedModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from pipeline.attention.norms import value_norms, weighted_norms
from pipeline.core.errors import PipelineError

IMPLEMENTATION = "dark_secrets_engine"
Mode = Literal["uniform", "zero"]


@dataclass
class HeadControl:
    """What the engine does during one forward pass (pass it as `head_control=`)."""

    disabled: torch.Tensor | None = None  # bool [L, H] or [B, L, H]; True = head disabled
    mode: Mode = "uniform"
    gate: torch.Tensor | None = None  # float [L, H] or [B, L, H]; multiplies each head's output
    capture: Iterable[int] | None = None  # layers whose probabilities are recorded
    capture_heads: Sequence[int] | None = None  # heads kept in the record (None: all)
    maps: dict[int, torch.Tensor] = field(default_factory=dict)  # layer -> [B, h, T, T]
    # layer -> G_h [H, D, D] (norms.value_grams); given, captured layers also record norms
    value_grams: Mapping[int, torch.Tensor] | None = None
    norms: dict[int, torch.Tensor] = field(default_factory=dict)  # layer -> [B, h, T, T]
    layers_seen: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.mode not in ("uniform", "zero"):
            raise PipelineError(f"unknown head-disabling mode '{self.mode}'; use uniform or zero")
        self.capture = frozenset(self.capture or ())

    def disabled_in(self, layer: int) -> torch.Tensor | None:
        """Disabled heads of `layer` as bool [B or 1, H], or None when none is."""
        if self.disabled is None:
            return None
        rows = self.disabled[layer] if self.disabled.dim() == 2 else self.disabled[:, layer]
        rows = rows.reshape(-1, rows.shape[-1])  # [B or 1, H]
        return rows if bool(rows.any()) else None

    def gate_in(self, layer: int) -> torch.Tensor | None:
        """Head gates of `layer` as float [B or 1, H], or None when there is no gate."""
        if self.gate is None:
            return None
        rows = self.gate[layer] if self.gate.dim() == 2 else self.gate[:, layer]
        return rows.reshape(-1, rows.shape[-1])  # [B or 1, H]


def _key_is_real(mask: torch.Tensor | None, value: torch.Tensor) -> torch.Tensor:
    """Which keys are real tokens, as float [B, 1, 1, T] (1 real, 0 padding)."""
    batch, _, length, _ = value.shape
    if mask is None:
        return value.new_ones(batch, 1, 1, length)
    row = mask[:, :, :1, :]  # the [CLS] query's row: [B, 1, 1, T]
    real = row if row.dtype == torch.bool else row > torch.finfo(row.dtype).min / 2
    return real.to(value.dtype).expand(batch, 1, 1, length)


def uniform_probs(mask: torch.Tensor | None, value: torch.Tensor) -> torch.Tensor:
    """The uniform map of a disabled head: [B, 1, T, T], 1/n on each of the n real keys."""
    real = _key_is_real(mask, value)  # [B, 1, 1, T]
    return (real / real.sum(-1, keepdim=True)).expand(-1, 1, value.shape[2], -1)


def _eager_probs(query, key, mask, scaling) -> torch.Tensor:
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling  # [B, H, T, T]
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        else:
            scores = scores + mask
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)  # fp16-safe


def engine_attention(
    module: torch.nn.Module,
    query: torch.Tensor,  # [B, H, T, D]
    key: torch.Tensor,  # [B, H, T, D]
    value: torch.Tensor,  # [B, H, T, D]
    attention_mask: torch.Tensor | None,  # bool [B, 1, T, T] (True = attend) or None
    scaling: float | None = None,
    dropout: float = 0.0,
    head_control: HeadControl | None = None,
    **kwargs,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The registered attention function; returns ([B, T, H, D] output, probabilities or None)."""
    control = head_control
    if control is None:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    layer = module.layer_idx
    control.layers_seen.add(layer)
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    disabled = control.disabled_in(layer)  # bool [B or 1, H] or None
    if disabled is not None:
        disabled = disabled.to(query.device)
    uniform = disabled is not None and control.mode == "uniform"
    probs = None

    if layer in control.capture:
        probs = _eager_probs(query, key, attention_mask, scaling)  # [B, H, T, T]
        if uniform:
            probs = torch.where(
                disabled[:, :, None, None], uniform_probs(attention_mask, value), probs
            )
        heads = list(control.capture_heads) if control.capture_heads is not None else slice(None)
        control.maps[layer] = probs[:, heads].detach()
        if control.value_grams is not None:
            norms = value_norms(value[:, heads].detach(), control.value_grams[layer][heads])
            control.norms[layer] = weighted_norms(control.maps[layer], norms)  # [B, h, T, T]
        weights = torch.nn.functional.dropout(probs, p=dropout, training=module.training)
        output = torch.matmul(weights, value).transpose(1, 2)  # [B, T, H, D]
    else:
        real = _key_is_real(attention_mask, value)  # [B, 1, 1, T]
        mean_value = None
        if uniform:
            # A uniform head's output is the mean value over the real keys, for every query.
            mean_value = torch.matmul(real / real.sum(-1, keepdim=True), value)  # [B, H, 1, D]
            mean_value = mean_value.transpose(1, 2)  # [B, 1, H, D]
        if uniform and bool(disabled.all()):
            output = mean_value.expand(-1, query.shape[2], -1, -1)  # whole layer: no scores
        else:
            output, _ = sdpa_attention_forward(
                module, query, key, value, attention_mask, dropout=dropout, scaling=scaling
            )
            if uniform:
                output = torch.where(disabled[:, None, :, None], mean_value, output)

    if disabled is not None and control.mode == "zero":
        output = output.masked_fill(disabled[:, None, :, None], 0.0)
    gate = control.gate_in(layer)  # [B or 1, H] or None
    if gate is not None:
        output = output * gate.to(output.device, output.dtype)[:, None, :, None]
    if layer in control.norms:
        _scale_norms(control, layer, disabled, gate)
    return output, probs


def _scale_norms(
    control: HeadControl, layer: int, disabled: torch.Tensor | None, gate: torch.Tensor | None
) -> None:
    """Scale the recorded norms of `layer` as the heads' outputs were: by the gate [B or 1, H],
    and to 0 for heads zero-disabled (bool [B or 1, H])."""
    norms = control.norms[layer]  # [B, h, T, T]
    heads = list(control.capture_heads) if control.capture_heads is not None else slice(None)
    scale = torch.ones(1, control.value_grams[layer].shape[0], device=norms.device)  # [1, H]
    if disabled is not None and control.mode == "zero":
        scale = scale * (~disabled).to(norms.device, norms.dtype)
    if gate is not None:
        scale = scale * gate.detach().to(norms.device, norms.dtype)
    control.norms[layer] = norms * scale[:, heads, None, None]


AttentionInterface.register(IMPLEMENTATION, engine_attention)
AttentionMaskInterface.register(IMPLEMENTATION, sdpa_mask)


def model_shape(model: PreTrainedModel) -> tuple[int, int]:
    """(layers, heads) of an encoder."""
    return model.config.num_hidden_layers, model.config.num_attention_heads


def attach(model: PreTrainedModel) -> PreTrainedModel:
    """Route `model`'s attention through the engine; fail clearly where it cannot."""
    attention_modules = [m for m in model.modules() if hasattr(m, "layer_idx")]
    layers, _ = model_shape(model)
    if len({m.layer_idx for m in attention_modules}) < layers:
        raise PipelineError(
            f"{type(model).__name__}'s attention modules carry no layer_idx; the engine needs "
            "a transformers 5 encoder whose attention calls the AttentionInterface"
        )
    model.set_attn_implementation(IMPLEMENTATION)
    verify_reached(model)
    return model


def require_attached(model: PreTrainedModel) -> None:
    """Fail unless `model` runs the engine (a `head_control` would otherwise be ignored)."""
    if model.config._attn_implementation != IMPLEMENTATION:
        raise PipelineError(
            f"{type(model).__name__} runs '{model.config._attn_implementation}' attention, so a "
            "head_control would be ignored; call pipeline.attention.engine.attach(model) first"
        )


@torch.no_grad()
def verify_reached(model: PreTrainedModel) -> None:
    """Run a 3-token input and check that every layer called the engine."""
    layers, _ = model_shape(model)
    control = HeadControl()
    ids = torch.tensor([[model.config.pad_token_id or 0] * 3], device=model.device) + 1
    model(input_ids=ids, head_control=control)
    missing = sorted(set(range(layers)) - control.layers_seen)
    if missing:
        raise PipelineError(
            f"{type(model).__name__}: layers {missing} did not call the attention interface, so "
            "their maps cannot be captured or their heads disabled; use a model whose attention "
            "goes through transformers' AttentionInterface (BERT, RoBERTa, ...)"
        )


def head_mask(
    shape: tuple[int, int],
    heads: Iterable[tuple[int, int]] = (),
    layers: Iterable[int] = (),
) -> torch.Tensor:
    """A bool [L, H] mask with the given (layer, head) pairs and whole layers set to True."""
    num_layers, num_heads = shape
    mask = torch.zeros(num_layers, num_heads, dtype=torch.bool)
    for layer, head in heads:
        check_head(shape, layer, head)
        mask[layer, head] = True
    for layer in layers:
        check_head(shape, layer, 0)
        mask[layer] = True
    return mask


def check_head(shape: tuple[int, int], layer: int, head: int) -> None:
    """Raise a one-line error when (layer, head) lies outside a model of `shape`."""
    num_layers, num_heads = shape
    if not (0 <= layer < num_layers and 0 <= head < num_heads):
        raise PipelineError(
            f"layer {layer}, head {head} is out of range: the model has {num_layers} layers "
            f"x {num_heads} heads (0-based)"
        )
