"""The FrameNet reader and the paper's sentence filter on a hand-written lexical-unit file,
the sentence file, and the pieces of the framenet stage's head scoring (0-based)."""

from __future__ import annotations

import dataclasses
import json
import tarfile

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.analyses.framenet.claims import framenet_heads_stand_out
from pipeline.analyses.framenet.settings import FramenetConfig
from pipeline.attention.engine import attach
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.standout import top_set_apart
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.schema import typed
from pipeline.kovaleva.framenet import (
    capture_sentence_maps,
    encode_sentences,
    sentence_score,
    top_head_tables,
)
from pipeline.kovaleva.framenet_data import (
    Span,
    from_record,
    keep,
    load_sentences,
    piece_indices,
    read_lu_file,
    read_sentences,
    sentence_counts,
    to_jsonl,
    to_record,
)
from pipeline.kovaleva.tables import head_interval_frame
from pipeline.models.loading import load_encoder
from tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "framenet"
PAPER = typed(FramenetConfig, OmegaConf.load(CONF_DIR / "framenet" / "default.yaml"))
# lu1.xml: 101 keep (core FE far; a peripheral FE next to the target does not count),
# 102 > 12 tokens, 103 core FE exactly 2 tokens from the target, 104 core FE of 4 tokens,
# 105 two targets (two annotation sets), 106 only a null-instantiated core FE,
# 107 a target of two spans, 108 keep (core FE of exactly 3 tokens, 3 tokens away).


def test_fixture_keeps_exactly_the_sentences_that_pass():
    found = list(read_lu_file((FIXTURE / "lu" / "lu1.xml").read_text(), PAPER))
    assert [s.sentence_id for s in found] == [101, 108]
    first = found[0]
    assert (first.lu, first.frame) == ("copy.v", "Duplication")
    assert first.text[first.target.start : first.target.end] == "copied"
    assert [(fe.name, first.text[fe.start : fe.end]) for fe in first.core_fes] == [
        ("Creator", "Mary")
    ]


def test_filter_thresholds_are_settings():
    loose = dataclasses.replace(PAPER, max_tokens=20, max_fe_tokens=4, target_window=1)
    found = list(read_lu_file((FIXTURE / "lu" / "lu1.xml").read_text(), loose))
    assert [s.sentence_id for s in found] == [101, 102, 103, 104, 108]


def test_keep_measures_the_gap_in_tokens():
    text = "a b c d e f"
    target = [[Span("Target", 0, 1)]]  # token 0
    assert not keep(text, target, [Span("X", 4, 5)], PAPER)  # token 2: within 2
    assert keep(text, target, [Span("X", 6, 7)], PAPER)  # token 3
    assert not keep(text, target, [], PAPER)  # no core FE


def test_reads_the_release_packed_or_unpacked(tmp_path):
    packed = tmp_path / "fn.tgz"
    with tarfile.open(packed, "w:gz") as archive:
        archive.add(FIXTURE / "lu" / "lu1.xml", arcname="fndata-1.5/lu/lu1.xml")
    for source in (FIXTURE, packed):
        assert [s.sentence_id for s in read_sentences(source, PAPER)] == [101, 108]
    with pytest.raises(PipelineError, match="FrameNet not found"):
        read_sentences(tmp_path / "missing.tgz", PAPER)


def test_records_round_trip():
    sentence = next(read_lu_file((FIXTURE / "lu" / "lu1.xml").read_text(), PAPER))
    assert from_record(to_record(sentence)) == sentence


def test_piece_indices_skip_special_pieces():
    offsets = np.array([[0, 0], [0, 4], [5, 8], [8, 10], [0, 0]])  # [CLS] mary cop ##ied [SEP]
    special = np.array([True, False, False, False, True])
    assert piece_indices(offsets, special, [Span("T", 5, 10)]).tolist() == [2, 3]
    assert piece_indices(offsets, special, [Span("A", 0, 4), Span("T", 5, 6)]).tolist() == [1, 2]


def test_the_default_filter_is_the_papers():
    assert (PAPER.max_tokens, PAPER.max_fe_tokens, PAPER.target_window) == (12, 3, 2)


def test_sentence_file_round_trips_and_samples_with_the_seed(tmp_path):
    sentences = read_sentences(FIXTURE, PAPER)
    path = tmp_path / "sentences.jsonl"
    path.write_text(to_jsonl(sentences))
    first = json.loads(path.read_text().splitlines()[0])
    assert list(first) == sorted(first) and first["sentence_id"] == 101
    assert load_sentences(path, None, seed=0) == sentences
    assert load_sentences(path, 5, seed=0) == sentences  # more than there are: all
    picked = {load_sentences(path, 1, seed)[0].sentence_id for seed in range(8)}
    assert picked == {101, 108}  # the seed decides which one
    assert load_sentences(path, 1, seed=3) == load_sentences(path, 1, seed=3)
    with pytest.raises(PipelineError, match="run the framenet_data stage"):
        load_sentences(tmp_path / "missing.jsonl", None, seed=0)


def test_sentence_counts():
    sentences = read_sentences(FIXTURE, PAPER)
    assert sentence_counts(sentences) == {
        "sentences": 2,
        "frames": 1,
        "lexical_units": 1,
        "with_1_core_fes": 2,
    }
    two = dataclasses.replace(
        sentences[0], frame="Other", core_fes=(*sentences[0].core_fes, Span("Original", 5, 8))
    )
    assert sentence_counts([sentences[1], two]) == {
        "sentences": 2,
        "frames": 2,
        "lexical_units": 1,
        "with_1_core_fes": 1,
        "with_2_core_fes": 1,
    }


def test_encode_sentences_gives_one_segment_pieces_with_offsets(tokenizer):
    sentences = read_sentences(FIXTURE, PAPER)
    examples = encode_sentences(tokenizer, sentences, max_length=64)
    assert [e.example_id for e in examples] == [0, 1]  # positions in `sentences`
    second = examples[1]
    words = ["the", "young", "men", "then", "quickly", "copied", "it", "."]
    assert second.tokens.tokens == ["[CLS]", *words, "[SEP]"]
    assert second.row["input_ids"] == tokenizer(sentences[1].text)["input_ids"]
    assert second.tokens.offsets[6].tolist() == [27, 33]  # "copied"
    assert second.tokens.word_ids[[0, 1, -1]].tolist() == [-1, 0, -1]
    assert not second.tokens.segment_ids.any()
    assert second.tokens.texts == (sentences[1].text,)


def test_sentence_score_reads_from_frame_element_to_target_pieces(tokenizer):
    sentence = read_sentences(FIXTURE, PAPER)[1]  # The young men ... copied it .
    example = encode_sentences(tokenizer, [sentence], max_length=64)[0]
    maps = np.full((1, 2, 10, 10), 0.1)  # [L=1, H=2, n, n]; FE pieces 1-3, target piece 6
    maps[0, 0, 2, 6] = 0.7  # "young" -> "copied"
    maps[0, 1, 0, 6] = 0.9  # [CLS] -> "copied": [CLS] is no FE piece
    maps[0, 1, 8, 6] = 0.8  # "." -> "copied": not in the FE
    np.testing.assert_allclose(sentence_score(maps, example, sentence), [[0.7, 0.1]])


def test_top_head_tables_rank_heads_and_show_their_best_sentence(tokenizer):
    fixture = read_sentences(FIXTURE, PAPER)
    sentences = [fixture[0], fixture[1], fixture[0]]
    examples = encode_sentences(tokenizer, sentences, max_length=64)
    rng = np.random.default_rng(0)
    maps = [rng.random((1, 2, len(e.tokens), len(e.tokens))) for e in examples]  # [1, 2, n, n]
    scores = np.array([[[0.2, 0.5]], [[0.6, 0.5]], [[0.6, 0.1]]])  # [N=3, L=1, H=2]
    heads = head_interval_frame(scores, "score", n_resamples=50, seed=0)
    top, cells = top_head_tables(heads, scores, maps, examples, sentences, top_heads=2)
    assert top[["rank", "layer", "head"]].values.tolist() == [[1, 0, 0], [2, 0, 1]]
    assert top["score"].tolist() == pytest.approx([1.4 / 3, 1.1 / 3])
    assert top["score_ci_low"].tolist() == heads["score_ci_low"].tolist()  # the heads' own
    assert top["example_score"].tolist() == [0.6, 0.5]  # ties: the first sentence
    assert top["sentence"].tolist() == [fixture[1].text, fixture[0].text]
    first = top.iloc[0]
    assert (first["target"], first["core_fes"]) == ("copied", "Creator=The young men")
    assert first["note"] == "FE The young men -> LU copied"
    assert (first["frame"], first["lexical_unit"]) == ("Duplication", "copy.v")
    one = cells[cells["rank"] == 1]
    assert one[["layer", "head"]].drop_duplicates().values.tolist() == [[0, 0]]
    np.testing.assert_allclose(one["weight"], maps[1][0, 0].ravel())
    assert one["query_token"].iloc[0] == "[CLS]" and len(cells[cells["rank"] == 2]) == 13 * 13


def test_capture_sentence_maps_keep_the_sentence_order(tiny_model_cfg, tokenizer):
    model = attach(load_encoder(tiny_model_cfg, tokenizer).eval())
    fixture = read_sentences(FIXTURE, PAPER)
    examples = encode_sentences(tokenizer, [fixture[1], fixture[0], fixture[1]], max_length=64)
    maps = capture_sentence_maps(model, examples, batch_size=2, pad_id=tokenizer.pad_token_id)
    assert [m.shape for m in maps] == [(2, 4, 10, 10), (2, 4, 13, 13), (2, 4, 10, 10)]
    np.testing.assert_allclose(maps[0], maps[2], atol=1e-6)  # one sentence, two batches
    np.testing.assert_allclose(maps[1].sum(axis=-1), 1.0, rtol=1e-5)


# ---------------------------------------------------------------- "two heads stand out"


def test_top_set_apart_reads_the_second_and_third_bounds_after_widening():
    """Five heads, each interval +-0.0196 (standard error 0.01); Bonferroni z for five units
    at 1 - 0.05 / 10 is 2.5758, so every bound moves 0.025758 from its score."""
    score = np.array([0.5, 0.4, 0.2, 0.1, 0.15])
    found = top_set_apart(score, score - 0.0196, score + 0.0196, 2)
    z = 2.575829
    assert found.critical == pytest.approx(z, rel=1e-5)
    assert found.statistic == pytest.approx(0.4 / 0.2 - 1)
    assert found.ci_low == pytest.approx((0.4 - z * 0.01) / (0.2 + z * 0.01) - 1, rel=1e-5)
    assert found.ci_high == pytest.approx((0.4 + z * 0.01) / (0.2 - z * 0.01) - 1, rel=1e-5)
    assert found.evidence == {"units": 5, "top": 2}


def test_top_set_apart_needs_a_unit_beside_the_top():
    with pytest.raises(ValueError, match="no unit is left"):
        top_set_apart(np.ones(2), np.ones(2), np.ones(2), 2)


@pytest.mark.parametrize("second", [0.2, 0.3])
def test_the_two_heads_interval_covers_the_true_gap_after_ranking(second):
    """72 heads whose true scores are 0.1-0.2 and the two best `second` and 0.3 (a true gap
    of second / 0.2 - 1), each scored as the mean of 100 sentences (sd 0.15): the ranking
    interval covers the true gap in at least 95% of 300 runs."""
    rng = np.random.default_rng(7)
    truth = np.linspace(0.1, 0.2, 72)
    truth[-2:] = [second, 0.3]
    true_gap = np.sort(truth)[-2] / np.sort(truth)[-3] - 1
    covered = 0
    for _ in range(300):
        scores = truth + rng.normal(0, 0.15, (100, 72))  # [sentences, heads]
        mean, half = scores.mean(0), 1.959964 * scores.std(0, ddof=1) / 10
        found = top_set_apart(mean, mean - half, mean + half, 2)
        covered += found.ci_low <= true_gap <= found.ci_high
    assert covered / 300 >= 0.95


def test_the_framenet_claim_is_not_testable_without_a_head_beside_the_top_two(tmp_path):
    (tmp_path / "plots" / "framenet").mkdir(parents=True)
    heads = {"layer": [1, 1], "head": [1, 2], "score": [0.3, 0.2], "score_ci_low": [0.2, 0.1],
             "score_ci_high": [0.4, 0.3]}  # fmt: skip
    pd.DataFrame(heads).to_csv(tmp_path / "plots" / "framenet" / "heads.csv", index=False)
    claim = framenet_heads_stand_out()
    measured = claim.measure(StageOutputs(tmp_path), 42)
    assert claim.rule(measured) == "not testable"
    assert measured.note == "the model has 2 heads: none beside the top two"
