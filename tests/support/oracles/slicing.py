"""Heads physically removed from a BERT-family model's weights (Michel et al.'s speed-up).

transformers 5 dropped `PreTrainedModel.prune_heads` (and BERT's `prune_heads`), so this
slices the query/key/value rows and the attention output projection's columns of the pruned
heads with `transformers.pytorch_utils.prune_linear_layer`. The attention modules infer
their head count from the sliced width, so the result runs unchanged. A layer cannot have
zero heads (its reshape would be ambiguous), so where every head of a layer is pruned one
is kept with its output columns set to zero, which gives the same output.
"""

from __future__ import annotations

import copy

import torch
from transformers import PreTrainedModel
from transformers.pytorch_utils import prune_linear_layer


@torch.no_grad()
def slice_heads(model: PreTrainedModel, pruned: torch.Tensor) -> PreTrainedModel:
    """A copy of `model` without the heads marked in `pruned` (bool [L, H])."""
    sliced = copy.deepcopy(model)
    for layer, module in enumerate(sliced.base_model.encoder.layer):
        attention = module.attention
        width = attention.self.attention_head_size
        keep = (~pruned[layer]).nonzero().flatten().tolist() or [0]
        index = torch.tensor([h * width + i for h in keep for i in range(width)])
        for name in ("query", "key", "value"):
            setattr(attention.self, name, prune_linear_layer(getattr(attention.self, name), index))
        attention.output.dense = prune_linear_layer(attention.output.dense, index, dim=1)
        if bool(pruned[layer].all()):
            attention.output.dense.weight.zero_()
        attention.self.num_attention_heads = len(keep)
        attention.self.all_head_size = len(keep) * width
    return sliced
