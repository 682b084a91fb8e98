"""A tiny classifier where every head matters, and short padded rows, for ablation tests."""

from __future__ import annotations

import torch

from pipeline.models.loading import load_classifier

SHAPE = (2, 4)  # tiny_random: 2 layers x 4 heads


def strong_classifier(tiny_model_cfg, tokenizer):
    """The tiny classifier with weights large enough that every head matters."""
    model = load_classifier(tiny_model_cfg, tokenizer, num_labels=2, seed=0)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "LayerNorm" not in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.3)
    return model


def seven_rows() -> list[dict[str, list[int]]]:
    """Seven examples of lengths 3..12 (so batches pad), two segments each."""
    generator = torch.Generator().manual_seed(1)
    out = []
    for length in (5, 12, 3, 9, 7, 12, 4):
        ids = torch.randint(1000, 2000, (length,), generator=generator).tolist()
        out.append(
            {
                "input_ids": [101, *ids, 102],
                "token_type_ids": [0] * (length // 2 + 1) + [1] * (length - length // 2 + 1),
            }
        )
    return out
