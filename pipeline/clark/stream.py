"""Attention maps streamed through the engine, one example at a time, never all stored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.capture import Encoding, stream_maps
from pipeline.clark.words import piece_groups, word_maps


def encode_words(
    tokenizer: PreTrainedTokenizerBase, words: Sequence[str], max_length: int
) -> tuple[Encoding, np.ndarray] | None:
    """One sentence as one segment: (encoding, piece groups [n]), or None if it is too long.

    A word that the tokenizer turns into no piece at all (a stray control character) is
    replaced by the unknown token, so that every word keeps a place in the word map.
    """
    encoded = tokenizer(list(words), is_split_into_words=True, truncation=False)
    if len({w for w in encoded.word_ids() if w is not None}) < len(words):
        words = [w if tokenizer.tokenize(w) else tokenizer.unk_token for w in words]
        encoded = tokenizer(list(words), is_split_into_words=True, truncation=False)
    if len(encoded["input_ids"]) > max_length:
        return None
    keys = [k for k in ("input_ids", "token_type_ids") if k in encoded]
    return {k: encoded[k] for k in keys}, piece_groups(encoded.word_ids())


def stream_word_maps(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sequence[str]],
    batch_size: int,
    max_length: int,
    desc: str = "word attention",
) -> Iterator[tuple[int, torch.Tensor]]:
    """(index, word maps float [L, H, w + 2, w + 2]) per sentence that fits in `max_length`."""
    encoded = {i: encode_words(tokenizer, words, max_length) for i, words in enumerate(sentences)}
    kept = [i for i, item in encoded.items() if item is not None]
    encodings = [encoded[i][0] for i in kept]
    for position, maps in stream_maps(model, encodings, batch_size, tokenizer.pad_token_id, desc):
        index = kept[position]
        yield index, word_maps(maps, encoded[index][1])
