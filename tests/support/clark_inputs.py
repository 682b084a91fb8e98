"""Hand-built inputs with known answers for Clark et al.'s analyses: a dependency tree and its
head map, random trees, a GAP file and a tokenised pair."""

from __future__ import annotations

import numpy as np
import torch

from pipeline.clark.ud import Sentence

# "the dog barks loudly": the -> dog, dog -> barks, barks = root, loudly -> barks
TREE = Sentence(
    sent_id="t",
    words=("the", "dog", "barks", "loudly"),
    heads=(2, 3, 0, 3),
    relations=("det", "nsubj", "root", "advmod"),
    upos=("DET", "NOUN", "VERB", "ADV"),
)


def dependent_to_head_map(sentence: Sentence) -> torch.Tensor:
    """A word map [w + 2, w + 2] in which every dependent attends only to its head."""
    g = len(sentence) + 2
    maps = torch.zeros(g, g)
    maps[0, 0] = maps[-1, -1] = 1.0
    for j, head in enumerate(sentence.heads, start=1):
        maps[j, head] = 1.0  # the root word attends to [CLS] (position 0)
    return maps


def random_tree(rng: np.random.Generator, length: int) -> Sentence:
    heads = [0] + [int(rng.integers(1, j + 1)) for j in range(1, length)]  # heads to the left
    return Sentence("r", ("w",) * length, tuple(heads), ("dep",) * length, ("X",) * length)


GAP_TSV = (
    "ID\tText\tPronoun\tPronoun-offset\tA\tA-offset\tA-coref\tB\tB-offset\tB-coref\tURL\n"
    "d-1\tAnna met Bob. She smiled.\tShe\t14\tAnna\t0\tTRUE\tBob\t9\tFALSE\tu\n"
    "d-2\tAnna met Bob. He smiled.\tHe\t14\tAnna\t0\tFALSE\tBob\t9\tTRUE\tu\n"
    "d-3\tAnna met Bob and Carl. He left.\tHe\t23\tAnna\t0\tFALSE\tBob\t9\tFALSE\tu\n"
)


TOKENS = ["[CLS]", "a", ".", "[SEP]", "b", "[SEP]"]
WORD_IDS = [-1, 0, 1, -1, 2, -1]
