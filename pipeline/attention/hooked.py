"""The engine's hook path, for encoders whose attention never calls transformers'
AttentionInterface (DeBERTa-v2/v3 with its disentangled relative-position scores, MPNet with
its relative position bias).

Such a module computes its own softmax, so the engine cannot replace the attention function.
Copying the module's score computation (c2p and p2c terms, position buckets) would duplicate
model code and drift from it; instead the path reads and rewrites tensors at four points,
through PyTorch forward hooks, and computes nothing the model does not:

1. a pre-hook on the model takes `head_control` out of the forward's keyword arguments (these
   families do not pass unknown keywords down) and holds it for the pass; a pre-hook on each
   layer does the same for a layer called on its own with `head_control=` (the layer-wise
   runner, pipeline/attention/layerwise.py);
2. a pre-hook on each layer's self-attention records its attention mask, and on a captured
   layer asks the module for its probabilities (`output_attentions=True`); a forward hook
   takes them from the module's output, the model's own softmax, so captured maps equal
   eager `output_attentions` exactly, and hands the caller what it asked for; with
   `value_grams` it also records the value-weighted norms (pipeline/attention/norms.py) from
   those maps and the layer's values;
3. a forward hook on the value projection keeps the values [B, T, H*D] of a layer with
   uniform-disabled heads, or of a captured layer when norms are asked for;
4. a pre-hook on the attention output projection rewrites its input, the heads' context
   [B, T, H, D] side by side: a uniform head's slice becomes the mean of its values over
   the allowed keys (what a 1/n map gives), a zero head's slice becomes 0, and every slice
   is scaled by its gate (so gate gradients flow through the model's own graph).

What it costs: untouched layers pay four Python hook calls each; the attention itself runs
the model's own (eager) code, so the path is as fast as the model is without the engine,
and a uniform-disabled head still computes its scores before they are replaced. The
interface path instead runs SDPA and skips the scores of a wholly uniform layer
(benchmarks/bench_paths.py measures both on one BERT). BERT has sites too, so that the two
paths can be compared on one model (`attach(model, route="hooks")`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn
from transformers import PreTrainedModel

from pipeline.attention.control import (
    HeadControl,
    scale_norms,
    uniform_output,
    uniform_probs,
    zero_and_gate,
)
from pipeline.attention.norms import value_norms, weighted_norms
from pipeline.core.errors import PipelineError


@dataclass(frozen=True)
class Sites:
    """Where the hooks sit in one encoder layer (`base_model.encoder.layer[i]`): dotted paths."""

    attention: str  # self-attention: forward(hidden_states, attention_mask, ...) -> (x, probs)
    value: str  # value projection (Linear): output [B, T, H*D]
    projection: str  # attention output projection (Linear): input the context [B, T, H*D]


SITES = {
    "bert": Sites("attention.self", "attention.self.value", "attention.output.dense"),
    "deberta-v2": Sites("attention.self", "attention.self.value_proj", "attention.output.dense"),
    "mpnet": Sites("attention.attn", "attention.attn.v", "attention.attn.o"),
}


@dataclass
class _Pass:
    """What the hooks of one model share during a forward pass."""

    control: HeadControl | None = None
    masks: dict[int, torch.Tensor | None] = field(default_factory=dict)  # layer -> mask
    # layer -> [B, T, H*D], kept for the pass (BERT projects its context after the
    # self-attention returns, MPNet inside it, so no hook knows it reads them last)
    values: dict[int, torch.Tensor] = field(default_factory=dict)
    unasked: set[int] = field(default_factory=set)  # layers whose probabilities we requested

    def reset(self, control: HeadControl | None = None) -> None:
        self.control = control
        self.masks.clear()
        self.values.clear()
        self.unasked.clear()


def install_hooks(model: PreTrainedModel) -> None:
    """Register the hook path on `model`; fail in one line for a family without sites."""
    sites = SITES.get(model.config.model_type)
    layers = getattr(getattr(model.base_model, "encoder", None), "layer", None)
    if sites is None or layers is None:
        raise PipelineError(
            f"{type(model).__name__} ({model.config.model_type}) neither calls transformers' "
            f"attention interface nor has hook sites; supported: {', '.join(sorted(SITES))} "
            "by hooks, BERT, RoBERTa, ELECTRA, DistilBERT, ALBERT, ModernBERT by the interface"
        )
    if model.config._attn_implementation != "eager":
        model.set_attn_implementation("eager")  # the attention returns its probabilities
    state = _Pass()
    model.register_forward_pre_hook(_take_control(state), with_kwargs=True)
    model.register_forward_hook(lambda *_: state.reset(), always_call=True)
    for index, layer in enumerate(layers):
        layer.register_forward_pre_hook(_take_layer_control(state), with_kwargs=True)
        attention = layer.get_submodule(sites.attention)
        signature = inspect.signature(attention.forward)
        attention.register_forward_pre_hook(
            _before_attention(state, index, signature), with_kwargs=True
        )
        attention.register_forward_hook(_after_attention(state, index))
        layer.get_submodule(sites.value).register_forward_hook(_keep_values(state, index))
        layer.get_submodule(sites.projection).register_forward_pre_hook(
            _rewrite_context(state, index)
        )


def _take_control(state: _Pass) -> Callable:
    def hook(_model: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        state.reset(kwargs.pop("head_control", None))
        return args, kwargs

    return hook


def _take_layer_control(state: _Pass) -> Callable:
    """A layer called on its own with `head_control=` (even None) starts a pass of its own."""

    def hook(_layer: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        if "head_control" not in kwargs:
            return None  # called by the encoder: the model's pre-hook took the control
        state.reset(kwargs.pop("head_control"))
        return args, kwargs

    return hook


def _before_attention(state: _Pass, layer: int, signature: inspect.Signature) -> Callable:
    def hook(_module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        control = state.control
        if control is None:
            return None
        control.layers_seen.add(layer)
        bound = signature.bind(*args, **kwargs)
        state.masks[layer] = bound.arguments.get("attention_mask")
        if layer in control.capture and "output_attentions" in signature.parameters:
            if not bound.arguments.get("output_attentions", False):
                state.unasked.add(layer)
                bound.arguments["output_attentions"] = True
            return bound.args, bound.kwargs
        return None

    return hook


def _after_attention(state: _Pass, layer: int) -> Callable:
    def hook(module: nn.Module, _args: tuple, output: tuple) -> tuple | None:
        control = state.control
        if control is None or layer not in control.capture:
            return None
        probs = output[1] if len(output) > 1 else None  # [B, H, T, T]
        if not isinstance(probs, torch.Tensor):
            raise PipelineError(
                f"{type(module).__name__} (layer {layer}) returned no attention probabilities; "
                "the hook path needs the model's eager attention"
            )
        disabled = control.disabled_in(layer)  # bool [B or 1, H] or None
        if disabled is not None and control.mode == "uniform":
            uniform_map = uniform_probs(state.masks[layer], probs)  # [B, 1, T, T]
            probs = torch.where(disabled[:, :, None, None].to(probs.device), uniform_map, probs)
        heads = control.kept_heads()
        control.maps[layer] = probs[:, heads].detach()
        if control.value_grams is not None:
            values = state.values[layer]  # [B, T, H*D]
            batch, length, _ = values.shape
            value = values.reshape(batch, length, probs.shape[1], -1).transpose(1, 2)  # [B,H,T,D]
            norms = value_norms(value[:, heads].detach(), control.value_grams[layer][heads])
            control.norms[layer] = weighted_norms(control.maps[layer], norms)  # [B, h, T, T]
            scale_norms(control, layer, disabled, control.gate_in(layer))
        if layer in state.unasked:
            return (output[0], *([None] * (len(output) - 1)))
        return None

    return hook


def _keep_values(state: _Pass, layer: int) -> Callable:
    def hook(_module: nn.Module, _args: tuple, output: torch.Tensor) -> None:
        control = state.control
        if control is None:
            return
        uniform = control.mode == "uniform" and control.disabled_in(layer) is not None
        if uniform or (control.value_grams is not None and layer in control.capture):
            state.values[layer] = output  # [B, T, H*D]

    return hook


def _rewrite_context(state: _Pass, layer: int) -> Callable:
    def hook(_module: nn.Module, args: tuple) -> tuple | None:
        control = state.control
        if control is None:
            return None
        disabled = control.disabled_in(layer)  # bool [B or 1, H] or None
        gate = control.gate_in(layer)  # float [B or 1, H] or None
        if disabled is None and gate is None:
            return None
        context = args[0]  # [B, T, H*D]
        batch, length, width = context.shape
        heads = disabled.shape[-1] if disabled is not None else gate.shape[-1]
        context = context.reshape(batch, length, heads, width // heads)  # [B, T, H, D]
        if disabled is not None:
            disabled = disabled.to(context.device)
            if control.mode == "uniform":
                value = state.values[layer].reshape(batch, length, heads, -1).transpose(1, 2)
                mean = uniform_output(state.masks[layer], value)  # [B, 1, H, D]
                context = torch.where(disabled[:, None, :, None], mean, context)
        context = zero_and_gate(context, control, disabled, gate)
        return (context.reshape(batch, length, width), *args[1:])

    return hook
