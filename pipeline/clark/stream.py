"""Attention maps streamed through the engine, one example at a time, never all stored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from tqdm import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.capture import Encoding, capture_maps
from pipeline.clark.words import piece_groups, word_maps
from pipeline.data.batching import length_batches


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
