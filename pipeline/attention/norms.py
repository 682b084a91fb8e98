"""Value-weighted attention norms (Kobayashi et al. 2020, "Attention is Not Only a Weight").

Head h of a layer adds to query token i the vector sum_j alpha_h[i, j] f_h(x_j), where

    f_h(x) = (x W_V^h + b_V^h) W_O^h

is token x's value vector in head h ([D]) mapped through head h's slice of the attention
output projection ([D, hidden]). The value-weighted norm of the pair (i, j) is

    N_h[i, j] = || alpha_h[i, j] f_h(x_j) || = alpha_h[i, j] || f_h(x_j) ||   (alpha >= 0).

The engine (pipeline/attention/engine.py) has the value vectors v_h(x_j) = x_j W_V^h + b_V^h
in hand; ||f_h(x_j)||^2 = v_h(x_j) G_h v_h(x_j)^T with the Gram matrix
G_h = W_O^h (W_O^h)^T ([D, D]), so the norms cost one [D, D] product per token and head rather
than a [D, hidden] one. The output bias b_O is shared by all tokens and is left out, as in the
paper. No model code is patched: the output projections are read from the model's modules,
found through the family's layout (pipeline/attention/families.py).
"""

from __future__ import annotations

import torch
from transformers import PreTrainedModel

from pipeline.attention.families import output_projection


def value_grams(model: PreTrainedModel, layers: list[int]) -> dict[int, torch.Tensor]:
    """Per layer, G_h = W_O^h (W_O^h)^T for every head: float32 [H, D, D] on the model's device."""
    heads = model.config.num_attention_heads
    grams = {}
    for layer in layers:
        weight = output_projection(model, layer).weight.detach().float()  # [hidden, H*D]
        per_head = weight.T.reshape(heads, -1, weight.shape[0])  # [H, D, hidden] = W_O^h
        grams[layer] = per_head @ per_head.transpose(1, 2)  # [H, D, D]
    return grams


def value_norms(value: torch.Tensor, gram: torch.Tensor) -> torch.Tensor:
    """||f_h(x_j)|| for every head and token: value [B, H, T, D], gram [H, D, D] -> [B, H, T]."""
    value = value.float()
    squared = torch.einsum("bhtd,hde,bhte->bht", value, gram, value)  # [B, H, T]
    return squared.clamp_min(0).sqrt()


def weighted_norms(probs: torch.Tensor, norms: torch.Tensor) -> torch.Tensor:
    """N[b, h, i, j] = alpha[b, h, i, j] ||f_h(x_j)||: probs [B, H, T, T], norms [B, H, T]."""
    return probs.float() * norms[:, :, None, :]
