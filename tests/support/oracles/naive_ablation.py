"""The reference ablation sweep, done the slow, obvious way (for tests and the benchmark).

Each ablation is one full forward pass of the whole model with eager attention in every
layer. Heads are disabled without the attention engine: a forward pre-hook on each layer's
attention output projection (`layer.attention.output`, BERT's `BertSelfOutput`) rewrites
the disabled heads' slices of the context vectors it receives:

- `uniform`: the slice becomes the mean of that head's value vectors over the real tokens
  (what attending 1/n to each of the n real tokens gives, for every query);
- `zero`: the slice becomes 0.

Only models laid out like BERT (`bert.encoder.layer[i].attention.{self.value, output}`)
are supported; this is a yardstick, not a general tool.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel

from pipeline.ablation.sweep import Rows, row_lengths
from pipeline.attention.engine import Mode, model_shape
from pipeline.data.batching import length_batches
from pipeline.data.encoding import collate


def _disable_heads_hook(
    layer: torch.nn.Module, disabled: torch.Tensor, mode: Mode, current: dict[str, torch.Tensor]
):
    """A pre-hook on `layer.attention.output` that rewrites the heads in `disabled` [H];
    `current["attention_mask"]` [B, T] is the batch being run."""
    heads = int(disabled.numel())

    def hook(_module, args):
        context, layer_input = args  # [B, T, H*d], [B, T, D]
        batch, length, width = context.shape
        context = context.view(batch, length, heads, width // heads).clone()
        if mode == "zero":
            context[:, :, disabled] = 0.0
        else:
            value = layer.attention.self.value(layer_input).view(batch, length, heads, -1)
            real = current["attention_mask"].to(value.dtype)  # [B, T], 1 on real tokens
            weights = real / real.sum(-1, keepdim=True)
            mean = torch.einsum("bt,bthd->bhd", weights, value)  # [B, H, d]
            context[:, :, disabled] = mean[:, None, disabled]
        return context.view(batch, length, width), layer_input

    return hook


@torch.no_grad()
def naive_sweep(
    model: PreTrainedModel,
    rows: Rows,
    masks: Sequence[torch.Tensor],
    *,
    mode: Mode,
    pad_id: int,
    batch_size: int = 32,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(baseline logits [N, C], logits [A, N, C]) from one full eager forward pass per
    batch and disabling mask (bool [L, H] each, e.g. `Ablation.mask(shape)`)."""
    eager = copy.deepcopy(model)
    eager.set_attn_implementation("eager")
    shape = model_shape(eager)
    layers = eager.base_model.encoder.layer
    batches = [
        collate([rows[i] for i in chosen], pad_id, model.device)
        for chosen in length_batches(row_lengths(rows), batch_size)
    ]
    order = [i for chosen in length_batches(row_lengths(rows), batch_size) for i in chosen]
    current: dict[str, torch.Tensor] = {}  # the batch being run, read by the hooks

    def run(disabled: torch.Tensor) -> np.ndarray:  # disabled: bool [L, H]
        handles = [
            layers[layer].attention.output.register_forward_pre_hook(
                _disable_heads_hook(layers[layer], disabled[layer], mode, current)
            )
            for layer in range(shape[0])
            if disabled[layer].any()
        ]
        try:
            outputs = []
            for batch in batches:
                current["attention_mask"] = batch["attention_mask"]
                outputs.append(eager(**batch).logits.float().cpu())
        finally:
            for handle in handles:
                handle.remove()
        logits = torch.cat(outputs).numpy()  # rows in batch order
        restored = np.empty_like(logits)
        restored[order] = logits
        return restored

    baseline = run(torch.zeros(shape, dtype=torch.bool))
    logits = np.stack([run(m) for m in tqdm(masks, desc="naive sweep", disable=not progress)])
    return baseline, logits
