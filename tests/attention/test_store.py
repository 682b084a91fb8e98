"""The Parquet attention store: round trip, filters, layout, metadata errors, atomicity, 8-bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from pipeline.attention import store as store_module
from pipeline.attention import store_writer
from pipeline.attention.dump_attention import _segments, tokenize_examples
from pipeline.attention.store import AttentionStore, TokenInfo, dequantize_rows
from pipeline.attention.store_writer import AttentionWriter, quantize_rows, write_attention
from pipeline.core.errors import PipelineError
from pipeline.core.schema import load_task

SHAPE = (3, 4)  # layers, heads
SETTINGS = dict(model_id="tiny", num_layers=3, num_heads=4, config_hash="abc123")


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def token_info(n: int, example_id: int) -> TokenInfo:
    return TokenInfo(
        tokens=["[CLS]", *[f"w{example_id}_{i}" for i in range(n - 2)], "[SEP]"],
        segment_ids=np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)],
        word_ids=np.r_[-1, np.arange(n - 2), -1],
        offsets=np.stack([np.arange(n), np.arange(n) + 1], axis=1),
        texts=(f"text {example_id}", "second"),
    )


def make_records(seed: int = 0) -> list[tuple]:
    """Both variants of 6 examples with real lengths 3..10; maps exact in float16."""
    rng = np.random.default_rng(seed)
    records = []
    lengths = {e: int(rng.integers(3, 11)) for e in (2, 5, 7, 11, 12, 20)}
    for variant in ("finetuned", "pretrained"):
        for example_id, n in lengths.items():
            maps = softmax(rng.normal(0, 3, (*SHAPE, n, n))).astype(np.float16).astype(np.float32)
            records.append((variant, "mrpc", example_id, maps, token_info(n, example_id)))
    return records


@pytest.fixture(scope="module")
def records():
    return make_records()


@pytest.fixture(scope="module")
def stored(records, tmp_path_factory):
    """A lossless store with small row groups (several per variant)."""
    path = tmp_path_factory.mktemp("store") / "mrpc.parquet"
    count = write_attention(path, records, **SETTINGS, row_group_bytes=2000)
    assert count == len(records)
    return AttentionStore(path, expect_model="tiny")


def expected(records, variant):
    return {r[2]: r[3] for r in records if r[0] == variant}


def test_round_trip_is_lossless_for_float16_maps(stored, records):
    assert stored.metadata["schema_version"] == store_module.SCHEMA_VERSION
    assert stored.metadata["config_hash"] == "abc123"
    assert (stored.num_layers, stored.num_heads) == SHAPE
    assert stored.variants == ["finetuned", "pretrained"]
    assert stored.tasks == ["mrpc"]
    for variant in stored.variants:
        want = expected(records, variant)
        assert stored.example_ids(variant, "mrpc") == sorted(want)
        got = stored.maps(variant, "mrpc")
        assert list(got) == sorted(want)
        for example_id, maps in got.items():
            assert maps.dtype == np.float32
            np.testing.assert_array_equal(maps, want[example_id])


def test_filters_select_layers_heads_and_examples(stored, records):
    want = expected(records, "pretrained")
    got = stored.maps("pretrained", "mrpc", layers=[2, 0], heads=[3, 1], examples=[20, 5])
    assert list(got) == [5, 20]
    for example_id, maps in got.items():
        np.testing.assert_array_equal(maps, want[example_id][[2, 0]][:, [3, 1]])
    one_head = stored.maps("finetuned", "mrpc", layers=[1], heads=[2])
    finetuned = expected(records, "finetuned")
    for example_id, maps in one_head.items():
        np.testing.assert_array_equal(maps[0, 0], finetuned[example_id][1, 2])


def test_iter_maps_streams_the_written_maps(stored, records):
    want = expected(records, "finetuned")
    streamed = list(stored.iter_maps("finetuned", "mrpc", heads=[0], examples=[20, 2, 7]))
    assert [e for e, _ in streamed] == [2, 7, 20]  # in stored order
    for example_id, maps in streamed:
        np.testing.assert_array_equal(maps, want[example_id][:, [0]])


def test_tokens_round_trip(stored, records):
    infos = stored.all_tokens("mrpc")
    assert list(infos) == [2, 5, 7, 11, 12, 20]
    for variant, _, example_id, _, info in records[:6]:
        got = stored.tokens("mrpc", example_id)
        assert got.tokens == info.tokens
        assert got.texts == info.texts
        np.testing.assert_array_equal(got.segment_ids, info.segment_ids)
        np.testing.assert_array_equal(got.word_ids, info.word_ids)
        np.testing.assert_array_equal(got.offsets, info.offsets)
        assert variant == "finetuned"


def test_layout_sorted_rows_row_groups_and_encodings(stored):
    parquet = pq.ParquetFile(stored.path)
    ids = parquet.read(columns=["variant", "task", "example_id", "layer"]).to_pandas()
    keys = list(
        zip(ids.variant.astype(str), ids.task.astype(str), ids.example_id, ids.layer, strict=True)
    )
    assert keys == sorted(keys)
    assert parquet.num_row_groups > 2
    seen_examples: set[tuple[str, int]] = set()
    for group in range(parquet.num_row_groups):
        rows = parquet.read_row_group(group, columns=["variant", "example_id"]).to_pandas()
        examples = set(zip(rows.variant.astype(str), rows.example_id, strict=True))
        assert rows.variant.nunique() == 1  # a group never spans two variants
        assert not examples & seen_examples  # nor splits an example
        seen_examples |= examples
    columns = {
        parquet.metadata.row_group(0).column(i).path_in_schema: parquet.metadata.row_group(
            0
        ).column(i)
        for i in range(parquet.metadata.num_columns)
    }
    for name, column in columns.items():
        assert column.compression == "ZSTD"
        is_id = name in store_module.ID_COLUMNS
        assert ("RLE_DICTIONARY" in column.encodings) == is_id, name
    assert "BYTE_STREAM_SPLIT" in columns["head_0.list.element"].encodings


def test_bad_selection_errors(stored):
    with pytest.raises(PipelineError, match="3 layers x 4 heads"):
        stored.maps("pretrained", "mrpc", layers=[3])
    with pytest.raises(PipelineError, match="3 layers x 4 heads"):
        stored.maps("pretrained", "mrpc", heads=[4])
    with pytest.raises(PipelineError, match=r"examples \[3\] are not in the store"):
        stored.maps("pretrained", "mrpc", examples=[2, 3])
    with pytest.raises(PipelineError, match="no attention for variant 'random'"):
        stored.example_ids("random", "mrpc")
    with pytest.raises(PipelineError, match="no task 'rte'"):
        stored.all_tokens("rte")


def test_foreign_files_are_refused(stored, tmp_path, monkeypatch, records):
    with pytest.raises(PipelineError, match="model 'tiny', not 'bert_base_uncased'"):
        AttentionStore(stored.path, expect_model="bert_base_uncased")
    with pytest.raises(PipelineError, match="attention store not found"):
        AttentionStore(tmp_path / "missing.parquet")
    plain = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(plain)
    with pytest.raises(PipelineError, match="is not an attention store"):
        AttentionStore(plain)
    old = tmp_path / "old.parquet"
    monkeypatch.setattr(store_writer, "SCHEMA_VERSION", 0)  # a store written by older code
    write_attention(old, records[:1], **SETTINGS)
    monkeypatch.undo()
    with pytest.raises(PipelineError, match="schema version 0, this code reads version 1"):
        AttentionStore(old)


def test_writer_refuses_unsorted_or_misshaped_rows(tmp_path, records):
    path = tmp_path / "bad.parquet"
    with pytest.raises(PipelineError, match="must come sorted"):
        write_attention(path, [records[1], records[0]], **SETTINGS)
    variant, task, example_id, maps, info = records[0]
    with pytest.raises(PipelineError, match="expected"):
        write_attention(path, [(variant, task, example_id, maps[:2], info)], **SETTINGS)
    assert not path.exists()


def test_failed_write_leaves_no_file_and_keeps_the_old_one(tmp_path, records):
    path = tmp_path / "mrpc.parquet"
    with pytest.raises(RuntimeError), AttentionWriter(path, **SETTINGS) as writer:
        writer.add(*records[0])
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
    write_attention(path, records[:2], **SETTINGS)
    before = path.read_bytes()
    with pytest.raises(RuntimeError), AttentionWriter(path, **SETTINGS) as writer:
        writer.add(*records[0])
        raise RuntimeError("killed")
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_failed_row_group_write_leaves_no_file(tmp_path, records, monkeypatch):
    def broken(self, table):
        raise OSError("disk full")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", broken)
    path = tmp_path / "mrpc.parquet"
    with pytest.raises(OSError, match="disk full"):
        write_attention(path, records, **SETTINGS, row_group_bytes=2000)
    assert list(tmp_path.iterdir()) == []


def test_uint8_error_is_within_a_255th_of_the_row_max(tmp_path, records):
    path = tmp_path / "q.parquet"
    write_attention(path, records, **SETTINGS, quantize="uint8")
    quantized = AttentionStore(path)
    assert quantized.metadata["quantize"] == "uint8"
    for variant in ("finetuned", "pretrained"):
        want = expected(records, variant)
        for example_id, maps in quantized.maps(variant, "mrpc", heads=[1, 3]).items():
            exact = want[example_id][:, [1, 3]]
            error = np.abs(maps - exact).max(-1)  # [layers, heads, n]
            assert np.all(error <= exact.max(-1) / 255)
            assert error.max() > 0  # it is lossy


def test_quantize_rows_bound_on_hard_rows():
    rng = np.random.default_rng(1)
    # row maxima spread over many binades, incl. values just above float16 rounding points
    peaks = np.float32(2.0) ** rng.uniform(-12, 0, size=(200, 1)) * np.float32(1 + 2**-12)
    rows = (rng.random((200, 30)) * peaks).astype(np.float32)
    codes, scale = quantize_rows(rows[None])
    error = np.abs(dequantize_rows(codes, scale)[0] - rows).max(-1)
    assert np.all(error <= rows.max(-1) / 255)


def test_unknown_quantize_mode_is_refused(tmp_path):
    with pytest.raises(PipelineError, match=r"unknown dump\.quantize 'int4'"):
        AttentionWriter(tmp_path / "x.parquet", **SETTINGS, quantize="int4")


def test_tokenize_examples_aligns_pieces_to_words(tokenizer):
    frame = pd.DataFrame(
        {
            "idx": [7],
            "sentence1": ["Unbelievable, isn't it?"],
            "sentence2": ["Quite so."],
            "label": [1],
        }
    )
    (example,) = tokenize_examples(tokenizer, load_task("mrpc"), frame, max_length=64)
    info = example.tokens
    assert example.example_id == 7
    assert info.texts == ("Unbelievable, isn't it?", "Quite so.")
    assert len(info) == len(example.row["input_ids"])
    assert info.tokens[0] == "[CLS]" and info.tokens[-1] == "[SEP]"
    words: dict[int, str] = {}
    for piece, word, segment, (start, end) in zip(
        info.tokens, info.word_ids, info.segment_ids, info.offsets, strict=True
    ):
        if word < 0:
            assert piece in ("[CLS]", "[SEP]")
            continue
        text = info.texts[segment]
        words[word] = words.get(word, "") + text[start:end]
    # sentence A: unbelievable , isn ' t it ? ; sentence B's words numbered after A's
    assert list(words.values()) == [
        "Unbelievable",
        ",",
        "isn",
        "'",
        "t",
        "it",
        "?",
        "Quite",
        "so",
        ".",
    ]
    assert list(words) == list(range(10))


def test_segments_without_token_type_ids():
    # RoBERTa-style pair <s> a a </s> </s> b </s>: specials take the segment on their left
    segments = _segments([None, 0, 0, None, None, 1, None])
    np.testing.assert_array_equal(segments, [0, 0, 0, 0, 0, 1, 1])
