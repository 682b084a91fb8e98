"""What the attention engine does in one forward pass (`HeadControl`), and the per-head
arithmetic both of its paths share: the uniform map of a disabled head, the output such a head
gives, and zero-disabling and gating a layer's per-head outputs.

A uniform-disabled head gives each query 1/n on each of the n keys that query may attend: the
real tokens ([CLS] and [SEP] included, padding excluded), and on a layer with a sliding window
(ModernBERT's local layers) the real tokens inside the query's window. That is what a head
whose scores are all equal computes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import nn

from pipeline.core.errors import PipelineError

Mode = Literal["uniform", "zero"]
ENGINE_LAYERS = "attention_engine_layers"  # attribute attach() sets on each attention module


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
    # compiled passes: every layer takes the masked path whatever its mask holds (no branch on
    # a tensor's values), so one graph serves every mask; the results are the same
    static: bool = False
    calls: dict[int, int] = field(default_factory=dict, repr=False)  # id(module) -> calls

    def __post_init__(self) -> None:
        if self.mode not in ("uniform", "zero"):
            raise PipelineError(f"unknown head-disabling mode '{self.mode}'; use uniform or zero")
        self.capture = frozenset(self.capture or ())

    def begin_pass(self) -> None:
        """Forget the calls counted in an earlier forward pass (shared modules count calls)."""
        self.calls.clear()

    def layer_of(self, module: nn.Module) -> int:
        """The layer `module` computes now: its only layer, or, for a module shared by several
        layers (ALBERT), the next one in the order the forward pass calls it."""
        layers = getattr(module, ENGINE_LAYERS, None)
        if layers is None:
            raise PipelineError(
                f"{type(module).__name__} was not mapped to its layers; call "
                "pipeline.attention.engine.attach(model) on the model you run"
            )
        if len(layers) == 1:
            return layers[0]
        done = self.calls.get(id(module), 0)
        if done == len(layers):
            raise PipelineError(
                f"{type(module).__name__} ran more than its {len(layers)} layers in one pass; "
                "pass head_control to the model that attach() returned, one forward at a time"
            )
        self.calls[id(module)] = done + 1
        return layers[done]

    def resume_at(self, module: nn.Module, layer: int) -> None:
        """Make the next call of shared `module` compute `layer`: a pass run one layer at a
        time (pipeline/attention/layerwise.py) may start above the first layer."""
        self.calls[id(module)] = getattr(module, ENGINE_LAYERS).index(layer)

    def disabled_in(self, layer: int) -> torch.Tensor | None:
        """Disabled heads of `layer` as bool [B or 1, H], or None when none is."""
        if self.disabled is None:
            return None
        rows = self.disabled[layer] if self.disabled.dim() == 2 else self.disabled[:, layer]
        rows = rows.reshape(-1, rows.shape[-1])  # [B or 1, H]
        return rows if self.static or bool(rows.any()) else None

    def gate_in(self, layer: int) -> torch.Tensor | None:
        """Head gates of `layer` as float [B or 1, H], or None when there is no gate."""
        if self.gate is None:
            return None
        rows = self.gate[layer] if self.gate.dim() == 2 else self.gate[:, layer]
        return rows.reshape(-1, rows.shape[-1])  # [B or 1, H]

    def kept_heads(self) -> list[int] | slice:
        """The heads a capture keeps, as an index into the head axis."""
        return list(self.capture_heads) if self.capture_heads is not None else slice(None)


def allowed_keys(
    mask: torch.Tensor | None, like: torch.Tensor, per_query: bool = False
) -> torch.Tensor:
    """Which keys a query may attend, as float [B, 1, T or 1, T] (1 allowed, 0 masked).

    `mask` is bool (True = attend), integer (nonzero = attend) or additive float, of shape
    [B, 1, T or 1, T]; `like` [B, *, T, *] gives batch, length and dtype. Without `per_query`
    every query reads the first query's row (no window: the rows differ at most on padding
    queries, whose outputs nothing reads)."""
    batch, length = like.shape[0], like.shape[2]
    if mask is None:
        return like.new_ones(batch, 1, 1, length)
    rows = mask if per_query else mask[:, :, :1, :]
    floating = rows.is_floating_point()  # additive: masked keys hold about dtype.min
    allowed = rows > torch.finfo(rows.dtype).min / 2 if floating else rows != 0
    return allowed.to(like.dtype).expand(batch, 1, -1, length)


def uniform_weights(
    mask: torch.Tensor | None, like: torch.Tensor, per_query: bool = False
) -> torch.Tensor:
    """The uniform map: [B, 1, T or 1, T], 1/n on each of the n keys a query may attend."""
    allowed = allowed_keys(mask, like, per_query)
    return allowed / allowed.sum(-1, keepdim=True).clamp_min(1)


def uniform_probs(
    mask: torch.Tensor | None, like: torch.Tensor, per_query: bool = False
) -> torch.Tensor:
    """The uniform map of a disabled head, one row per query: [B, 1, T, T]."""
    return uniform_weights(mask, like, per_query).expand(-1, 1, like.shape[2], -1)


def uniform_output(
    mask: torch.Tensor | None, value: torch.Tensor, per_query: bool = False
) -> torch.Tensor:
    """A uniform head's output, the mean of its values over the allowed keys:
    value [B, H, T, D] -> [B, T or 1, H, D]."""
    weights = uniform_weights(mask, value, per_query)  # [B, 1, T or 1, T]
    return torch.matmul(weights, value).transpose(1, 2)


def zero_and_gate(
    output: torch.Tensor,  # [B, T, H, D]
    control: HeadControl,
    disabled: torch.Tensor | None,  # bool [B or 1, H]
    gate: torch.Tensor | None,  # float [B or 1, H]
) -> torch.Tensor:
    """Zero the heads disabled in `zero` mode and scale every head by its gate: [B, T, H, D]."""
    if disabled is not None and control.mode == "zero":
        output = output.masked_fill(disabled[:, None, :, None], 0.0)
    if gate is not None:
        output = output * gate.to(output.device, output.dtype)[:, None, :, None]
    return output


def scale_norms(
    control: HeadControl, layer: int, disabled: torch.Tensor | None, gate: torch.Tensor | None
) -> None:
    """Scale the recorded norms of `layer` as the heads' outputs were: by the gate [B or 1, H],
    and to 0 for heads zero-disabled (bool [B or 1, H])."""
    norms = control.norms[layer]  # [B, h, T, T]
    heads = control.kept_heads()
    scale = torch.ones(1, control.value_grams[layer].shape[0], device=norms.device)  # [1, H]
    if disabled is not None and control.mode == "zero":
        scale = scale * (~disabled).to(norms.device, norms.dtype)
    if gate is not None:
        scale = scale * gate.detach().to(norms.device, norms.dtype)
    control.norms[layer] = norms * scale[:, heads, None, None]
