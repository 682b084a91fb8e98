"""The padding benchmark: its share on hand-made batches, the re-cut it compares against, and
the default profile's tasks, whose grouped batches meet the padding target (SST-2 <= 6%)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_padding import markdown, padding_share, recut, run, task_padding

REPO = Path(__file__).resolve().parents[2]


def test_the_share_counts_padding_among_all_tokens():
    lengths = [4, 2, 3, 3]
    assert padding_share(lengths, [[0, 1], [2, 3]]) == pytest.approx(1 - 12 / 14)
    assert padding_share(lengths, [[2, 3]], multiple=4) == pytest.approx(1 - 6 / 8)
    assert recut([[0], [1, 2], [3]], 2) == [[0, 1], [2, 3]]


def test_the_grouped_batches_pad_less_than_their_re_cut():
    lengths = [9, 9, 7, 7, 5, 5, 3, 3, 1]  # pairs of equal length, one row left over
    shares = task_padding(lengths, batch_size=2, epochs=3, seed=0, multiples=[4])
    assert shares["grouped"] == 0.0 < shares["re-cut"]
    assert shares["grouped, multiple of 4"] > 0.0


def test_the_default_profiles_padding_meets_its_target(shared_data):
    result = run("quick", [8])
    assert list(result["tasks"]) == ["sst2", "mrpc", "rte", "stsb"]
    assert result["tasks"]["sst2"]["grouped"] <= 0.06
    for row in result["tasks"].values():
        assert row["grouped"] <= row["re-cut"] and row["grouped"] <= row["grouped, multiple of 8"]
    assert "| sst2 | 600 |" in markdown(result)


def test_the_record_and_the_docs_table_are_the_default_profiles_padding(shared_data):
    record = json.loads((REPO / "benchmarks" / "records" / "padding_quick.json").read_text())
    assert run(record["profile"], [8, 16]) == record
    assert markdown(record) in (REPO / "docs" / "benchmarks.md").read_text()
