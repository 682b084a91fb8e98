"""The attention engine: one public API (`attach`, `HeadControl`) over two paths.

After `attach(model)`, a `HeadControl` passed as `model(**batch, head_control=control)` lets
one forward pass

- capture the attention probabilities of chosen layers and heads;
- disable chosen heads, per batch ([L, H]) or per example ([B, L, H]), in two modes:
  `uniform` (Kovaleva et al.: every query gives 1/n to each of the n real tokens, [CLS]
  and [SEP] included; pipeline/attention/control.py says what a window changes) or `zero`
  (Michel et al.: the head's output is multiplied by 0);
- scale each head's output by a differentiable gate, [L, H] or per example [B, L, H]
  (Michel et al.'s xi_h; per-example gates give per-example gradients);
- with `value_grams` (pipeline/attention/norms.py), capture beside the probabilities the
  value-weighted norms ||alpha_h[i, j] f_h(x_j)|| of Kobayashi et al. (2020), scaled like the
  head's output by its gate (0 for a zero-disabled head).

`attach` picks the path from the model's family:

- **interface** (BERT, RoBERTa/XLM-R, ELECTRA, DistilBERT, ALBERT, ModernBERT): every
  self-attention module calls `ALL_ATTENTION_FUNCTIONS[config._attn_implementation](module,
  query, key, value, mask, **kwargs)` and keyword arguments given to the model's forward reach
  that call, so `engine_attention` below is registered as an implementation. A probe pass at
  attach time records the order in which the modules call it: the k-th call of a pass is
  layer k, so modules without a `layer_idx` (DistilBERT) and one module shared by every layer
  (ALBERT, which the pass calls once per layer) are mapped alike. Layers neither captured nor
  touched run transformers' SDPA path unchanged; a layer whose heads are all uniform-disabled
  skips the attention scores entirely.
- **hooks** (DeBERTa-v2/v3, MPNet): their attention computes its own softmax, with relative
  position terms, and never calls the interface; pipeline/attention/hooked.py reaches them
  through forward hooks (its docstring gives the design and the cost).

No model code is patched or copied.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import torch
from torch import nn
from transformers import AttentionInterface, PreTrainedModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from pipeline.attention.control import (
    ENGINE_LAYERS,
    HeadControl,
    Mode,
    scale_norms,
    uniform_output,
    uniform_probs,
    zero_and_gate,
)
from pipeline.attention.hooked import install_hooks
from pipeline.attention.norms import value_norms, weighted_norms
from pipeline.core.errors import PipelineError
from pipeline.core.head_names import check_head

IMPLEMENTATION = "dark_secrets_engine"
PROBE = "dark_secrets_probe"  # records which module calls the interface, in order
ROUTE = "attention_engine_route"  # attribute attach() sets on the model: its path
Route = Literal["auto", "hooks"]
# The public API; HeadControl and Mode are defined in control.py and exported from here.
__all__ = [
    "HeadControl",
    "Mode",
    "attach",
    "check_head",
    "head_mask",
    "model_shape",
    "require_attached",
]


def _eager_probs(query, key, mask, scaling) -> torch.Tensor:
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling  # [B, H, T, T]
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        else:
            scores = scores + mask
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)  # fp16-safe


def engine_attention(
    module: nn.Module,
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
    layer = control.layer_of(module)
    control.layers_seen.add(layer)
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    windowed = kwargs.get("sliding_window") is not None  # ModernBERT's local layers
    disabled = control.disabled_in(layer)  # bool [B or 1, H] or None
    if disabled is not None:
        disabled = disabled.to(query.device)
    uniform = disabled is not None and control.mode == "uniform"
    probs = None

    if layer in control.capture:
        probs = _eager_probs(query, key, attention_mask, scaling)  # [B, H, T, T]
        if uniform:
            uniform_map = uniform_probs(attention_mask, value, windowed)  # [B, 1, T, T]
            probs = torch.where(disabled[:, :, None, None], uniform_map, probs)
        heads = control.kept_heads()
        control.maps[layer] = probs[:, heads].detach()
        if control.value_grams is not None:
            norms = value_norms(value[:, heads].detach(), control.value_grams[layer][heads])
            control.norms[layer] = weighted_norms(control.maps[layer], norms)  # [B, h, T, T]
        weights = nn.functional.dropout(probs, p=dropout, training=module.training)
        output = torch.matmul(weights, value).transpose(1, 2)  # [B, T, H, D]
    else:
        mean_value = None
        if uniform:
            # A uniform head's output is the mean value over the allowed keys.
            mean_value = uniform_output(attention_mask, value, windowed)  # [B, T or 1, H, D]
        if uniform and not control.static and bool(disabled.all()):
            output = mean_value.expand(-1, query.shape[2], -1, -1)  # whole layer: no scores
        else:
            output, _ = sdpa_attention_forward(
                module, query, key, value, attention_mask, dropout=dropout, scaling=scaling
            )
            if uniform:
                output = torch.where(disabled[:, None, :, None], mean_value, output)

    gate = control.gate_in(layer)  # [B or 1, H] or None
    output = zero_and_gate(output, control, disabled, gate)
    if layer in control.norms:
        scale_norms(control, layer, disabled, gate)
    return output, probs


def _probe_attention(
    module: nn.Module,
    query: torch.Tensor,  # [B, H, T, D]
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    probe_calls: list[nn.Module] | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """SDPA attention that appends the calling module to `probe_calls`."""
    probe_calls.append(module)
    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


for _name, _function in ((IMPLEMENTATION, engine_attention), (PROBE, _probe_attention)):
    AttentionInterface.register(_name, _function)
    AttentionMaskInterface.register(_name, sdpa_mask)


def model_shape(model: PreTrainedModel) -> tuple[int, int]:
    """(layers, heads) of an encoder."""
    return model.config.num_hidden_layers, model.config.num_attention_heads


def attach(model: PreTrainedModel, route: Route = "auto") -> PreTrainedModel:
    """Route `model`'s attention through the engine; fail clearly where it cannot.

    By default the interface path where the model's family supports transformers' attention
    functions and the hook path otherwise; `route="hooks"` forces the hook path (to compare
    the two paths on one model, e.g. BERT)."""
    if getattr(model, ROUTE, None) is not None:
        return model  # attached already
    interface = route == "auto" and type(model)._supports_attention_backend
    if interface:
        _map_layers(model, _probe(model))
        model.set_attn_implementation(IMPLEMENTATION)
        model.register_forward_pre_hook(_begin_pass, with_kwargs=True)
    else:
        install_hooks(model)
    setattr(model, ROUTE, "interface" if interface else "hooks")
    verify_reached(model)
    return model


@torch.no_grad()
def _probe(model: PreTrainedModel) -> list[nn.Module]:
    """The modules that call the attention interface in one forward pass, in call order."""
    model.set_attn_implementation(PROBE)
    calls: list[nn.Module] = []
    model(input_ids=_probe_ids(model), probe_calls=calls)
    return calls


def _map_layers(model: PreTrainedModel, calls: list[nn.Module]) -> None:
    """Give each attention module the layers it computes: the k-th call of a pass is layer k."""
    layers, _ = model_shape(model)
    if len(calls) != layers:
        raise PipelineError(
            f"{type(model).__name__}: {len(calls)} attention-interface calls in one pass for its "
            f"{layers} layers, so its layers cannot be told apart; the engine needs one call "
            "per layer (e.g. ALBERT with inner_group_num=1)"
        )
    for module in dict.fromkeys(calls):
        setattr(module, ENGINE_LAYERS, tuple(k for k, m in enumerate(calls) if m is module))


def _begin_pass(_model: nn.Module, args: tuple, kwargs: dict) -> None:
    """Forward pre-hook: a new pass starts counting the calls of shared modules afresh."""
    if kwargs.get("head_control") is not None:
        kwargs["head_control"].begin_pass()


def require_attached(model: PreTrainedModel) -> None:
    """Fail unless `model` runs the engine (a `head_control` would otherwise be ignored)."""
    route = getattr(model, ROUTE, None)
    if route is None or (
        route == "interface" and model.config._attn_implementation != IMPLEMENTATION
    ):
        raise PipelineError(
            f"{type(model).__name__} runs '{model.config._attn_implementation}' attention, so a "
            "head_control would be ignored; call pipeline.attention.engine.attach(model) first"
        )


def _probe_ids(model: PreTrainedModel) -> torch.Tensor:
    """A 3-token input: int [1, 3]."""
    return torch.tensor([[(model.config.pad_token_id or 0) + 1] * 3], device=model.device)


@torch.no_grad()
def verify_reached(model: PreTrainedModel) -> None:
    """Run a 3-token input and check that every layer reached the engine."""
    layers, _ = model_shape(model)
    control = HeadControl()
    model(input_ids=_probe_ids(model), head_control=control)
    missing = sorted(set(range(layers)) - control.layers_seen)
    if missing:
        raise PipelineError(
            f"{type(model).__name__}: layers {missing} did not reach the attention engine, so "
            "their maps cannot be captured or their heads disabled; pass head_control through "
            "the model's forward (transformers 5 encoders do)"
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
