"""GAP coreference: the file and its sample, the nearest baseline, and the names' scores."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.clark.gap import (
    EncodedGap,
    Span,
    encode_gap,
    head_correct,
    name_scores,
    nearest_candidate,
    read_gap,
    read_gap_sample,
)
from pipeline.core.errors import PipelineError
from pipeline.data.sampling import seeded_subset
from tests.support.clark_inputs import (
    GAP_TSV,
)


def test_read_gap_skips_neither_and_nearest_baseline(tmp_path):
    path = tmp_path / "gap-development.tsv"
    path.write_text(GAP_TSV)
    examples = read_gap(path)
    assert [e.answer for e in examples] == [0, 1]
    assert examples[0].pronoun == Span(14, 17) and examples[0].names[1] == Span(9, 12)
    assert [nearest_candidate(e) for e in examples] == [1, 1]  # Bob is nearer both times
    with pytest.raises(PipelineError, match="GAP file not found"):
        read_gap(tmp_path / "missing.tsv")


def test_read_gap_sample_reads_the_splits_file_and_draws_a_seeded_sample(tmp_path):
    (tmp_path / "gap-validation.tsv").write_text(GAP_TSV)
    every = read_gap_sample(tmp_path, "validation", None, seed=0)
    assert [e.answer for e in every] == [0, 1]  # d-3 (neither name) left out
    (drawn,) = read_gap_sample(tmp_path, "validation", 1, seed=5)
    assert drawn == every[int(seeded_subset(2, 1, 5)[0])]
    with pytest.raises(PipelineError, match=r"gap-development\.tsv"):
        read_gap_sample(tmp_path, "development", None, seed=0)


def test_name_scores_use_the_most_attended_word_of_each_name(tokenizer, tmp_path):
    path = tmp_path / "gap-development.tsv"
    path.write_text(GAP_TSV)
    example = read_gap(path)[0]  # [CLS] anna met bob . she smiled . [SEP]
    item = encode_gap(tokenizer, example, max_length=32)
    assert item.pronoun.tolist() == [5]
    assert [w.tolist() for w in item.names] == [[1], [3]]
    n = len(item.encoding["input_ids"])
    maps = torch.zeros(1, 2, n, n)
    maps[0, 0, 5, 1] = 0.7  # head 0: she -> anna (right)
    maps[0, 0, 5, 3] = 0.3
    maps[0, 1, 5, 3] = 0.9  # head 1: she -> bob (wrong)
    scores = name_scores(maps, item)  # [2, 1, 2]
    torch.testing.assert_close(scores[:, 0, 0], torch.tensor([0.7, 0.3]))
    correct = head_correct([scores, scores.flip(0)], [0, 1])  # [2 examples, 1, 2]
    assert correct.tolist() == [[[True, False]], [[True, False]]]


def test_name_scores_take_the_max_over_a_names_words():
    item = EncodedGap(  # [CLS] x y ##y z she [SEP]: A = "x y", B = "z"
        encoding={"input_ids": [0] * 7},
        pronoun=np.array([5]),
        names=(np.array([1, 2]), np.array([3])),  # word indices (groups)
        groups=np.array([0, 1, 2, 2, 3, 4, 5]),
    )
    maps = torch.zeros(1, 1, 7, 7)
    maps[0, 0, 5] = torch.tensor([0.0, 0.1, 0.2, 0.2, 0.5, 0.0, 0.0])  # "y" gets 0.2 + 0.2
    scores = name_scores(maps, item)[:, 0, 0]
    torch.testing.assert_close(scores, torch.tensor([0.4, 0.5]))
