"""Token roles as image channels: where [CLS], [SEP] and the sentences are in a map.

Whether a column is [CLS] or [SEP] and where one sentence ends decide the vertical and block
types, yet a map's weights alone do not show them. The classifier therefore sees, beside
the map, three channels of the same size built from the word pieces only:

    cls[i, j]  = 1 where key j is [CLS]                          (a column)
    sep[i, j]  = 1 where key j is a [SEP]                        (one column per sentence)
    same[i, j] = 1 where query i and key j are plain tokens of the same sentence
                 (the squares a block map fills; one square for a single sentence)

A [SEP] closes its sentence: the sentence of position i is the number of [SEP] before i.

The special tokens are the tokenizer's own, read from the input itself: every supported
tokenizer opens an input with its cls token and closes it with its sep token ([CLS] ... [SEP]
for BERT, DistilBERT, ALBERT, ELECTRA, DeBERTa, ModernBERT; <s> ... </s> for RoBERTa and
MPNet, whose pairs read <s> A </s></s> B </s>, so B's sentence number is 2, not 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ROLE_CHANNELS = ("cls", "sep", "same_sentence")


def special_positions(tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(is_cls, is_sep), bool [n] each: where the input's opening token (its tokenizer's cls
    token) and its closing token (the sep token) stand."""
    if not tokens:
        return np.zeros(0, bool), np.zeros(0, bool)
    pieces = np.asarray(tokens, dtype=object)
    return pieces == tokens[0], pieces == tokens[-1]


def sentence_ids(tokens: Sequence[str]) -> np.ndarray:
    """int [n]: 0 for the first sentence (and [CLS]), then one more after each [SEP]."""
    is_sep = special_positions(tokens)[1].astype(int)
    return np.concatenate([[0], np.cumsum(is_sep)[:-1]]) if len(tokens) else np.zeros(0, int)


def is_pair(tokens: Sequence[str]) -> bool:
    """Whether the input holds two sentences (two [SEP] or more): only then can a map be
    block."""
    return int(special_positions(tokens)[1].sum()) >= 2


def role_channels(tokens: Sequence[str]) -> np.ndarray:
    """float32 [3, n, n]: the cls, sep and same-sentence channels of an n-token input."""
    n = len(tokens)
    is_cls, is_sep = special_positions(tokens)
    plain = ~(is_cls | is_sep)
    sentence = sentence_ids(tokens)
    same = (sentence[:, None] == sentence[None, :]) & plain[:, None] & plain[None, :]
    columns = np.ones((n, 1), dtype=bool)
    return np.stack([columns & is_cls[None, :], columns & is_sep[None, :], same]).astype(np.float32)
