"""Token roles as image channels: where [CLS], [SEP] and the sentences are in a map.

Whether a column is [CLS] or [SEP] and where one sentence ends decide the vertical and block
types, yet a map's weights alone do not show them. The classifier therefore sees, beside
the map, three channels of the same size built from the word pieces only:

    cls[i, j]  = 1 where key j is [CLS]                          (a column)
    sep[i, j]  = 1 where key j is a [SEP]                        (one column per sentence)
    same[i, j] = 1 where query i and key j are plain tokens of the same sentence
                 (the squares a block map fills; one square for a single sentence)

A [SEP] closes its sentence: the sentence of position i is the number of [SEP] before i.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CLS, SEP = "[CLS]", "[SEP]"
ROLE_CHANNELS = ("cls", "sep", "same_sentence")


def sentence_ids(tokens: Sequence[str]) -> np.ndarray:
    """int [n]: 0 for the first sentence (and [CLS]), 1 for the second, ..."""
    is_sep = np.array([t == SEP for t in tokens], dtype=int)
    return np.concatenate([[0], np.cumsum(is_sep)[:-1]]) if len(tokens) else np.zeros(0, int)


def is_pair(tokens: Sequence[str]) -> bool:
    """Whether the input holds two sentences (two [SEP]): only then can a map be block."""
    return sum(t == SEP for t in tokens) >= 2


def role_channels(tokens: Sequence[str]) -> np.ndarray:
    """float32 [3, n, n]: the cls, sep and same-sentence channels of an n-token input."""
    n = len(tokens)
    is_cls = np.array([t == CLS for t in tokens])
    is_sep = np.array([t == SEP for t in tokens])
    plain = ~(is_cls | is_sep)
    sentence = sentence_ids(tokens)
    same = (sentence[:, None] == sentence[None, :]) & plain[:, None] & plain[None, :]
    columns = np.ones((n, 1), dtype=bool)
    return np.stack([columns & is_cls[None, :], columns & is_sep[None, :], same]).astype(np.float32)
