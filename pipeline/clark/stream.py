"""Attention maps streamed through the engine, one example at a time, never all stored.

`measure` chooses the maps: the weights (Clark et al.), the value-weighted norms as row
shares or the rollout, one map per layer (pipeline/attention/measures.py); word maps are
made from the chosen piece maps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.capture import Encoding, stream_measures
from pipeline.attention.measures import captured_for, measure_maps
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
    measure: str = "weights",
) -> Iterator[tuple[int, torch.Tensor]]:
    """(index, word maps float [L, H, w + 2, w + 2]) per sentence that fits in `max_length`,
    of `measure` ([L, 1, w + 2, w + 2] for rollout)."""
    encoded = {i: encode_words(tokenizer, words, max_length) for i, words in enumerate(sentences)}
    kept = [i for i, item in encoded.items() if item is not None]
    encodings = [encoded[i][0] for i in kept]
    stream = stream_measures(
        model, encodings, batch_size, tokenizer.pad_token_id, captured_for(measure), desc
    )
    for position, captured in stream:
        index = kept[position]
        maps = captured["weights"] if measure == "weights" else measure_maps(captured, measure)
        yield index, word_maps(torch.as_tensor(maps), encoded[index][1])
