"""Every attention map of a batch, captured through the engine in one forward pass."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import PreTrainedModel

from pipeline.attention.engine import HeadControl, model_shape, require_attached
from pipeline.data.encoding import collate

Encoding = dict[str, list[int]]  # input_ids (and token_type_ids), unpadded


@torch.no_grad()
def capture_maps(
    model: PreTrainedModel,
    encodings: Sequence[Encoding],
    pad_id: int,
    dtype: torch.dtype = torch.float32,
) -> list[torch.Tensor]:
    """One forward pass over `encodings`; per encoding its maps [L, H, n, n] of `dtype` on
    the CPU, cropped to its real length n.

    `model` must be attached to the engine (pipeline.attention.engine.attach).
    """
    require_attached(model)
    num_layers, _ = model_shape(model)
    control = HeadControl(capture=range(num_layers))
    batch = collate(list(encodings), pad_id, model.device)  # input_ids etc. [B, T]
    model(**batch, head_control=control)
    maps = torch.stack([control.maps[layer] for layer in range(num_layers)], dim=1)  # [B,L,H,T,T]
    maps = maps.to(dtype).cpu()
    lengths = [len(e["input_ids"]) for e in encodings]
    return [m[..., :n, :n] for m, n in zip(maps, lengths, strict=True)]
