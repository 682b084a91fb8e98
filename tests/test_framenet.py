"""The FrameNet reader and the paper's sentence filter on a hand-written lexical-unit file."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.framenet import (
    FilterRule,
    Span,
    from_record,
    keep,
    piece_indices,
    read_lu_file,
    read_sentences,
    to_record,
)

FIXTURE = Path(__file__).parent / "fixtures" / "framenet"
# lu1.xml: 101 keep (core FE far; a peripheral FE next to the target does not count),
# 102 > 12 tokens, 103 core FE exactly 2 tokens from the target, 104 core FE of 4 tokens,
# 105 two targets (two annotation sets), 106 only a null-instantiated core FE,
# 107 a target of two spans, 108 keep (core FE of exactly 3 tokens, 3 tokens away).


def test_fixture_keeps_exactly_the_sentences_that_pass():
    found = list(read_lu_file((FIXTURE / "lu" / "lu1.xml").read_text(), FilterRule()))
    assert [s.sentence_id for s in found] == [101, 108]
    first = found[0]
    assert (first.lu, first.frame) == ("copy.v", "Duplication")
    assert first.text[first.target.start : first.target.end] == "copied"
    assert [(fe.name, first.text[fe.start : fe.end]) for fe in first.core_fes] == [
        ("Creator", "Mary")
    ]


def test_filter_thresholds_are_settings():
    loose = FilterRule(max_tokens=20, max_fe_tokens=4, target_window=1)
    found = list(read_lu_file((FIXTURE / "lu" / "lu1.xml").read_text(), loose))
    assert [s.sentence_id for s in found] == [101, 102, 103, 104, 108]


def test_keep_measures_the_gap_in_tokens():
    text = "a b c d e f"
    target = [[Span("Target", 0, 1)]]  # token 0
    assert not keep(text, target, [Span("X", 4, 5)], FilterRule())  # token 2: within 2
    assert keep(text, target, [Span("X", 6, 7)], FilterRule())  # token 3
    assert not keep(text, target, [], FilterRule())  # no core FE


def test_reads_the_release_packed_or_unpacked(tmp_path):
    packed = tmp_path / "fn.tgz"
    with tarfile.open(packed, "w:gz") as archive:
        archive.add(FIXTURE / "lu" / "lu1.xml", arcname="fndata-1.5/lu/lu1.xml")
    for source in (FIXTURE, packed):
        assert [s.sentence_id for s in read_sentences(source, FilterRule())] == [101, 108]
    with pytest.raises(PipelineError, match="FrameNet not found"):
        read_sentences(tmp_path / "missing.tgz", FilterRule())


def test_records_round_trip():
    sentence = next(read_lu_file((FIXTURE / "lu" / "lu1.xml").read_text(), FilterRule()))
    assert from_record(to_record(sentence)) == sentence


def test_piece_indices_skip_special_pieces():
    offsets = np.array([[0, 0], [0, 4], [5, 8], [8, 10], [0, 0]])  # [CLS] mary cop ##ied [SEP]
    special = np.array([True, False, False, False, True])
    assert piece_indices(offsets, special, [Span("T", 5, 10)]).tolist() == [2, 3]
    assert piece_indices(offsets, special, [Span("A", 0, 4), Span("T", 5, 6)]).tolist() == [1, 2]
