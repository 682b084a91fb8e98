"""Every attention map of a batch, captured through the engine in one forward pass, and a
stream of them over many inputs in batches of similar length."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
from tqdm import tqdm
from transformers import PreTrainedModel

from pipeline.attention.engine import HeadControl, model_shape, require_attached
from pipeline.data.batching import length_batches
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


@torch.no_grad()
def stream_maps(
    model: PreTrainedModel,
    encodings: Sequence[Encoding],
    batch_size: int,
    pad_id: int,
    desc: str = "attention",
) -> Iterator[tuple[int, torch.Tensor]]:
    """(index, maps float [L, H, n, n]) for every encoding, in batches of similar length.

    The model must be attached to the engine (pipeline.attention.engine.attach). Examples come in
    length order, not input order; the index says which one each is.
    """
    lengths = [len(encoding["input_ids"]) for encoding in encodings]
    for chosen in tqdm(length_batches(lengths, batch_size), desc=desc, unit="batch"):
        maps = capture_maps(model, [encodings[i] for i in chosen], pad_id)
        yield from zip(chosen, maps, strict=True)
