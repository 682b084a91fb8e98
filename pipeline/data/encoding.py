"""Tokenising GLUE frames, and padding a batch of encodings (`collate`)."""

from __future__ import annotations

import pandas as pd
import torch
from transformers import PreTrainedTokenizerBase

from pipeline.core.schema import TaskConfig


def encode(
    tokenizer: PreTrainedTokenizerBase, task: TaskConfig, frame: pd.DataFrame, max_length: int
) -> list[dict[str, list[int]]]:
    """Token ids (and segment ids) per row, truncated to `max_length`, not padded."""
    texts = [frame[column].tolist() for column in task.text_columns]
    encoded = tokenizer(*texts, truncation=True, max_length=max_length)
    keys = [k for k in ("input_ids", "token_type_ids") if k in encoded]
    return [{k: encoded[k][i] for k in keys} for i in range(len(frame))]


def bucketed_width(longest: int, multiple: int) -> int:
    """`longest` rounded up to a multiple of `multiple` (1: unchanged): the padded width of a
    batch whose lengths are bucketed, so that a compiled model sees few distinct shapes."""
    if multiple < 1:
        raise ValueError(f"a padding multiple must be at least 1, got {multiple}")
    return -(-longest // multiple) * multiple


def collate(
    rows: list[dict[str, list[int]]],
    pad_id: int,
    device: torch.device | str = "cpu",
    multiple: int = 1,
) -> dict[str, torch.Tensor]:
    """Pad a list of encodings to the batch's longest, rounded up to a multiple of
    `multiple` (`bucketed_width`): input_ids etc. [B, T]."""
    width = bucketed_width(max(len(r["input_ids"]) for r in rows), multiple)
    batch: dict[str, torch.Tensor] = {}
    for key in rows[0]:
        fill = pad_id if key == "input_ids" else 0
        padded = [r[key] + [fill] * (width - len(r[key])) for r in rows]
        batch[key] = torch.tensor(padded, dtype=torch.long, device=device)
    lengths = torch.tensor([len(r["input_ids"]) for r in rows], device=device)
    batch["attention_mask"] = (torch.arange(width, device=device)[None] < lengths[:, None]).long()
    return batch
