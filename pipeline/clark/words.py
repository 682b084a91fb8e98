"""Word-level attention from word-piece attention (Clark et al. 2019, Sec. 4.1).

Attention *to* a word is the sum of the attention to its pieces; attention *from* a word is
the mean of its pieces' attention rows. Both keep every row a distribution. Special tokens
([CLS], [SEP]) stay tokens of their own, so a one-segment sentence of w words becomes a
(w + 2) x (w + 2) map with [CLS] at 0, the words at 1..w and [SEP] at w + 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def piece_groups(word_ids: Sequence[int | None]) -> np.ndarray:
    """The group (word or special token) of each piece, numbered in order: int [n].

    `word_ids` is the tokenizer's `word_ids()` (None for special tokens) or the store's
    (-1 for special tokens); each special token becomes a group of its own.
    """
    groups = np.empty(len(word_ids), dtype=np.int64)
    current, last_word = -1, None
    for position, word in enumerate(word_ids):
        special = word is None or word < 0
        if special or word != last_word:
            current += 1
        groups[position] = current
        last_word = None if special else word
    return groups


def word_maps(maps: torch.Tensor, groups: np.ndarray) -> torch.Tensor:
    """Piece maps [..., n, n] -> word maps [..., g, g] (sum over key pieces, mean over queries)."""
    n = maps.shape[-1]
    g = int(groups.max()) + 1
    member = torch.zeros(g, n, dtype=maps.dtype, device=maps.device)  # [g, n]
    member[torch.as_tensor(groups, device=maps.device), torch.arange(n, device=maps.device)] = 1
    to_words = maps @ member.T  # [..., n, g]: attention to each word, summed over its pieces
    mean = member / member.sum(-1, keepdim=True)  # [g, n]: averages the rows of a word's pieces
    return mean @ to_words  # [..., g, g]
