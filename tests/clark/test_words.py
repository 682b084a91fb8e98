"""Word pieces grouped into words: word maps, and encoding words with or without pieces."""

from __future__ import annotations

import numpy as np
import torch

from pipeline.clark.stream import encode_words
from pipeline.clark.words import piece_groups, word_maps


def test_piece_groups_number_words_and_specials_in_order():
    assert piece_groups([None, 0, 0, 1, None]).tolist() == [0, 1, 1, 2, 3]
    assert piece_groups([-1, 0, 1, 1, 1, -1, 2, -1]).tolist() == [0, 1, 2, 2, 2, 3, 4, 5]


def test_word_maps_sum_to_words_and_average_from_words():
    groups = np.array([0, 1, 1, 2])  # [CLS] w1 w1 [SEP]
    maps = torch.tensor(
        [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.2, 0.6, 0.2],  # first piece of w1: 0.8 to w1
            [0.5, 0.0, 0.0, 0.5],  # second piece of w1: nothing to w1
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    words = word_maps(maps, groups)
    expected = torch.tensor(
        [
            [1.0, 0.0, 0.0],
            [0.25, 0.4, 0.35],  # mean of rows (0, 0.8, 0.2) and (0.5, 0, 0.5)
            [0.25, 0.5, 0.25],
        ]
    )
    torch.testing.assert_close(words, expected)


def test_word_maps_on_real_tokenizer_output(tokenizer):
    words = ["The", "unaffable", "Wittgenstein", "spoke", "."]
    encoding, groups = encode_words(tokenizer, words, max_length=64)
    pieces = tokenizer.convert_ids_to_tokens(encoding["input_ids"])
    assert len(pieces) > len(words) + 2  # some words really are split
    assert groups.max() + 1 == len(words) + 2  # [CLS], the five words, [SEP]
    for k, word in enumerate(words, start=1):  # the pieces of word k spell it
        spelled = "".join(
            p.removeprefix("##") for p, g in zip(pieces, groups, strict=True) if g == k
        )
        assert spelled == word.lower()
    n = len(pieces)
    identity = torch.eye(n)[None, None]  # [1, 1, n, n]: every piece attends to itself
    result = word_maps(identity, groups)[0, 0]  # [7, 7]
    torch.testing.assert_close(result, torch.eye(len(words) + 2))  # a word attends to itself
    uniform = word_maps(torch.full((n, n), 1.0 / n), groups)  # to a word: its share of pieces
    sizes = torch.bincount(torch.as_tensor(groups)).float()
    torch.testing.assert_close(uniform, (sizes / n).expand(len(sizes), -1))


def test_encode_words_keeps_a_place_for_words_without_pieces(tokenizer):
    _, groups = encode_words(tokenizer, ["a", "\u200b", "b"], max_length=16)
    assert groups.max() + 1 == 5  # the zero-width space became [UNK]
    assert encode_words(tokenizer, ["word"] * 40, max_length=16) is None
