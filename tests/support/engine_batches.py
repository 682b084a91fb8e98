"""A tiny random BERT's shape and a padded batch to compare the attention engine against."""

from __future__ import annotations

import torch

from pipeline.data.encoding import collate

LENGTHS = [9, 5, 7]  # real lengths of the test batch (padded to 9)


def crop_maps(maps: torch.Tensor, lengths: list[int]) -> list[torch.Tensor]:
    """Cut a batch of maps [B, H, T, T] to each example's real length: B x [H, n, n]."""
    return [maps[i, :, :n, :n] for i, n in enumerate(lengths)]


# 3 layers x 4 heads, 3 labels; large weights: peaked maps and logits far from 0
SHAPE = dict(
    layers=3, heads=4, hidden=32, intermediate=64, vocab=50, positions=32, labels=3,
    initializer_range=0.2,
)  # fmt: skip


def make_batch(pad_id: int = 0, seed: int = 0) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    rows = [
        {"input_ids": (torch.randint(5, 50, (n,), generator=generator)).tolist()} for n in LENGTHS
    ]
    return collate(rows, pad_id)  # input_ids, attention_mask [3, 9]
