"""The attention-based probe and its words variant, the GloVe reader, and UAS without
punctuation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.clark.probe import probe_example, probe_uas, train_probe
from pipeline.clark.ud import (
    Sentence,
)
from pipeline.clark.vectors import WordVectors
from pipeline.core.errors import PipelineError
from tests.support.clark_inputs import (
    dependent_to_head_map,
    random_tree,
)


def test_probe_learns_the_head_that_encodes_the_tree():
    rng = np.random.default_rng(0)
    examples = []
    for _ in range(40):
        sentence = random_tree(rng, int(rng.integers(3, 9)))
        noise = torch.softmax(torch.randn(3, len(sentence) + 2, len(sentence) + 2) * 3, -1)
        signal = dependent_to_head_map(sentence)
        maps = torch.cat([noise, signal[None]])[None]  # [1, 4, w + 2, w + 2]; head 3 is syntax
        examples.append(probe_example(sentence, maps))
    probe = train_probe(examples[:30], epochs=30, batch_size=8, learning_rate=0.1, seed=0)
    assert probe_uas(probe, examples[30:], batch_size=8) == 1.0
    assert int(probe.u.argmax()) == 3  # the dependent->head direction of head 3 carries it


def left_or_right_example(rng: np.random.Generator) -> tuple[Sentence, torch.Tensor, np.ndarray]:
    """Words of type "x" take the previous word as head, "y" the next; ROOT past the ends.

    Head 0 attends to the previous word, head 1 to the next: the attention says where each
    candidate is, and only the word's type says which of the two is its head.
    """
    length = int(rng.integers(3, 9))
    kinds = rng.choice(["x", "y"], size=length)
    heads = [j - 1 if kind == "x" else (j + 1) % (length + 1) for j, kind in enumerate(kinds, 1)]
    sentence = Sentence("lr", tuple(kinds), tuple(heads), ("dep",) * length, ("X",) * length)
    g = length + 2
    previous, following = torch.zeros(g, g), torch.zeros(g, g)
    for j in range(1, length + 1):
        previous[j, j - 1] = 1.0
        following[j, (j + 1) % (length + 1)] = 1.0  # the last word's "next" is ROOT
    vectors = np.array([[1.0, 0.0] if kind == "x" else [0.0, 1.0] for kind in kinds], np.float32)
    return sentence, torch.stack([previous, following])[None], vectors


def test_words_probe_uses_the_word_to_choose_between_heads():
    rng = np.random.default_rng(1)
    data = [left_or_right_example(rng) for _ in range(40)]
    plain = [probe_example(s, m) for s, m, _ in data]
    words = [probe_example(s, m, v) for s, m, v in data]
    settings = {"epochs": 40, "batch_size": 8, "learning_rate": 0.1, "seed": 0}
    plain_uas = probe_uas(train_probe(plain[:30], **settings), plain[30:], batch_size=8)
    words_uas = probe_uas(train_probe(words[:30], **settings), words[30:], batch_size=8)
    assert words_uas == 1.0
    assert plain_uas < 0.8  # attention alone cannot tell x from y


def test_word_vectors_from_a_glove_text_file(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("the 0.1 0.2\ndog 1 2\ncat 3 4\n")
    vectors = WordVectors(str(path), ["The", "dog", "unicorn"])
    assert vectors.coverage == pytest.approx(2 / 3)
    np.testing.assert_allclose(vectors(["DOG", "the", "unicorn"]), [[1, 2], [0.1, 0.2], [0, 0]])
    with pytest.raises(PipelineError, match="word vectors not found"):
        WordVectors(str(tmp_path / "missing.txt"), ["a"])


def test_probe_uas_leaves_punctuation_out():
    sentence = Sentence(
        "p", ("a", "b", "."), (0, 1, 1), ("root", "dep", "punct"), ("X", "X", "PUNCT")
    )
    example = probe_example(sentence, dependent_to_head_map(sentence)[None, None])
    assert example.scored.tolist() == [True, True, False]
    assert example.features.shape == (1, 4, 4)  # ROOT + 3 words; [SEP] dropped
