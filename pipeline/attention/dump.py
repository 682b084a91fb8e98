"""Dumping attention: tokens with their word alignment, and every map of a model, into a store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.capture import capture_maps
from pipeline.attention.store import AttentionWriter, TokenInfo
from pipeline.core.config import TaskSpec
from pipeline.core.errors import PipelineError
from pipeline.data.batching import length_batches
from pipeline.data.encoding import encode


@dataclass(frozen=True)
class Example:
    """One input to dump: its id in the split, model inputs and token alignment."""

    example_id: int
    row: dict[str, list[int]]  # input_ids (and token_type_ids), unpadded
    tokens: TokenInfo


def _segments(sequence_ids: list[int | None]) -> np.ndarray:
    """Segment per piece from the tokenizer's sequence ids; a special token takes its left one's."""
    segments, current = [], 0
    for sequence in sequence_ids:
        current = current if sequence is None else sequence
        segments.append(current)
    return np.asarray(segments, dtype=np.int64)


def _word_ids(word_ids: list[int | None], sequence_ids: list[int | None]) -> np.ndarray:
    """Word index per piece, sentence B's words numbered after sentence A's; -1 for specials."""
    words_in_a = 1 + max(
        (w for w, s in zip(word_ids, sequence_ids, strict=True) if s == 0), default=-1
    )
    return np.asarray(
        [
            -1 if w is None else w + (words_in_a if s == 1 else 0)
            for w, s in zip(word_ids, sequence_ids, strict=True)
        ],
        dtype=np.int64,
    )


def tokenize_examples(
    tokenizer: PreTrainedTokenizerBase, task: TaskSpec, frame: pd.DataFrame, max_length: int
) -> list[Example]:
    """Model inputs (as `pipeline.data.encoding.encode` makes them) and token alignment per row."""
    if not tokenizer.is_fast:
        raise PipelineError(
            f"{type(tokenizer).__name__} is a slow tokenizer; the dump needs a fast one "
            "(word ids and character offsets)"
        )
    rows = encode(tokenizer, task, frame, max_length)
    texts = [frame[column].tolist() for column in task.text_columns]
    aligned = tokenizer(*texts, truncation=True, max_length=max_length, return_offsets_mapping=True)
    examples = []
    for i, (example_id, row) in enumerate(zip(frame["idx"], rows, strict=True)):
        sequence_ids = aligned.sequence_ids(i)
        segment_ids = (
            np.asarray(row["token_type_ids"])
            if "token_type_ids" in row
            else _segments(sequence_ids)
        )
        info = TokenInfo(
            tokens=tokenizer.convert_ids_to_tokens(row["input_ids"]),
            segment_ids=segment_ids,
            word_ids=_word_ids(aligned.word_ids(i), sequence_ids),
            offsets=np.asarray(aligned["offset_mapping"][i], dtype=np.int64).reshape(-1, 2),
            texts=tuple(str(t[i]) for t in texts),
        )
        examples.append(Example(int(example_id), row, info))
    return examples


def dump_variant(
    model: PreTrainedModel,
    examples: Sequence[Example],
    writer: AttentionWriter,
    variant: str,
    task: str,
    *,
    batch_size: int,
    pad_id: int,
    window: int = 128,
) -> None:
    """Write every map of `model` on `examples` (sorted by id) into `writer`.

    Examples go through in windows of `window` ids; inside a window they are batched by
    length, and the window is written in id order, so memory stays bounded.
    """
    # float16 is what a lossless store keeps; 8-bit codes are made from the float32 maps
    dtype = torch.float16 if writer.quantize == "none" else torch.float32
    with tqdm(total=len(examples), desc=f"dump {task} {variant}", unit="ex") as progress:
        for start in range(0, len(examples), window):
            chunk = examples[start : start + window]
            maps: dict[int, np.ndarray] = {}
            lengths = [len(e.row["input_ids"]) for e in chunk]
            for chosen in length_batches(lengths, batch_size):
                batch = [chunk[i] for i in chosen]
                batch_maps = capture_maps(model, [e.row for e in batch], pad_id, dtype)
                for example, example_maps in zip(batch, batch_maps, strict=True):
                    maps[example.example_id] = example_maps.numpy()
                progress.update(len(batch))
            for example in chunk:
                writer.add(
                    variant, task, example.example_id, maps.pop(example.example_id), example.tokens
                )
