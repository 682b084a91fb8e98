"""Tokenising GLUE frames and batching them with dynamic padding."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import torch
from transformers import PreTrainedTokenizerBase

from pipeline.core.config import TaskSpec


def encode(
    tokenizer: PreTrainedTokenizerBase, task: TaskSpec, frame: pd.DataFrame, max_length: int
) -> list[dict[str, list[int]]]:
    """Token ids (and segment ids) per row, truncated to `max_length`, not padded."""
    texts = [frame[column].tolist() for column in task.text_columns]
    encoded = tokenizer(*texts, truncation=True, max_length=max_length)
    keys = [k for k in ("input_ids", "token_type_ids") if k in encoded]
    return [{k: encoded[k][i] for k in keys} for i in range(len(frame))]


def collate(
    rows: list[dict[str, list[int]]], pad_id: int, device: torch.device | str = "cpu"
) -> dict[str, torch.Tensor]:
    """Pad a list of encodings to the batch's longest: input_ids etc. [B, T]."""
    width = max(len(r["input_ids"]) for r in rows)
    batch: dict[str, torch.Tensor] = {}
    for key in rows[0]:
        fill = pad_id if key == "input_ids" else 0
        padded = [r[key] + [fill] * (width - len(r[key])) for r in rows]
        batch[key] = torch.tensor(padded, dtype=torch.long, device=device)
    lengths = torch.tensor([len(r["input_ids"]) for r in rows], device=device)
    batch["attention_mask"] = (torch.arange(width, device=device)[None] < lengths[:, None]).long()
    return batch


def length_grouped_order(lengths: list[int], batch_size: int, seed: int) -> list[int]:
    """Shuffle, then sort within windows of 50 batches by length, then shuffle the batches.

    Batches hold examples of similar length (little padding) and still come in random order.
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    window = batch_size * 50
    chunks = [order[i : i + window] for i in range(0, len(order), window)]
    order = np.concatenate([c[np.argsort([-lengths[j] for j in c], kind="stable")] for c in chunks])
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return [int(j) for k in rng.permutation(len(batches)) for j in batches[k]]


def batches(
    rows: list[dict[str, list[int]]],
    batch_size: int,
    pad_id: int,
    device: torch.device | str = "cpu",
    order: list[int] | None = None,
) -> Iterator[tuple[list[int], dict[str, torch.Tensor]]]:
    """(row indices, padded batch) pairs, in `order` (default: as given)."""
    order = list(range(len(rows))) if order is None else order
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        yield chosen, collate([rows[i] for i in chosen], pad_id, device)
