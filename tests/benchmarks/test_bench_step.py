"""The step benchmark on tiny random BERTs: its tables' structure and arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from benchmarks.bench_cost import Shape, profile_params
from benchmarks.bench_step import (
    Batches,
    Subject,
    against,
    batch_orders,
    compare_optimizers,
    compare_side_by_side,
    compare_threads,
    fine_tuning_steps,
    interleaved,
    model_table,
    padding,
    step_settings,
    time_models,
)
from pipeline.core.schema import load_task
from pipeline.models.labelled import LabelledRows
from tests.support.builders import tiny_bert


def _subject(name: str, layers: int, length: int = 8, batch: int = 4) -> Subject:
    rng = np.random.default_rng(0)
    rows = [{"input_ids": [int(i) for i in rng.integers(1, 40, length)]} for _ in range(batch)]
    shape = Shape(layers=layers, heads=3, hidden=24, intermediate=32)
    return Subject(name, tiny_bert(layers), rows, np.array([0, 1] * (batch // 2)), 0, shape)


@pytest.fixture(scope="module")
def settings():
    return step_settings(profile_params("quick"), 4)


def test_interleaved_warms_up_then_alternates_the_order():
    calls = []
    seconds = interleaved({"a": calls.append, "b": lambda r: calls.append(-r)}, 3)
    assert calls == [0, 0, 1, -1, -2, 2, 3, -3]  # warm-up, then a b, b a, a b
    assert {k: len(v) for k, v in seconds.items()} == {"a": 3, "b": 3}


def test_model_table_rates_fractions_and_ratios(settings):
    subjects = [_subject("small", 1), _subject("large", 2)]
    seconds = time_models(subjects, settings, rounds=1)
    assert set(seconds) == {(s, w) for s in ("small", "large") for w in ("forward", "step")}
    assert all(value > 0 for value in seconds.values())
    peak = 50.0
    table = model_table(subjects, seconds, peak)
    assert [(r["model"], r["what"]) for r in table] == [
        ("small", "forward"), ("small", "step"), ("large", "forward"), ("large", "step"),
    ]  # fmt: skip
    flops = 4 * (2 * Shape(2, 3, 24, 32).layer_flops(8) + 2 * 24**2)  # batch x forward
    large_step = table[3]
    assert math.isclose(large_step["gflops"], 3 * flops / seconds["large", "step"] / 1e9)
    assert math.isclose(large_step["of_peak"], large_step["gflops"] / peak)
    assert math.isclose(large_step["ratio"], seconds["large", "step"] / seconds["small", "step"])
    assert table[0]["ratio"] == table[1]["ratio"] == 1.0


def test_padding_of_grouped_and_shuffled_batches():
    lengths = [5, 1, 4, 2]
    assert padding(lengths, [[0, 1], [2, 3]]) == {
        "real_tokens": 12,
        "padded_tokens": 18,  # 2 x 5 + 2 x 4
        "padding": 0.5,
    }
    orders = batch_orders(list(range(1, 101)), 10, seed=0)
    for batches in orders.values():
        assert sorted(i for batch in batches for i in batch) == list(range(100))
    grouped, shuffled = (padding(list(range(1, 101)), orders[k]) for k in ("grouped", "shuffled"))
    assert grouped["padding"] < shuffled["padding"]


def test_against_and_the_quick_profile_steps():
    table = against({"default": [2.0, 4.0, 3.0], "other": [1.0, 1.5, 9.0]}, "default")
    assert table == {
        "default": {"seconds": 3.0, "ratio": 1.0},
        "other": {"seconds": 1.5, "ratio": 0.5},
    }
    assert against({"d": [1.0, 3.0], "o": [4.0, 4.0]}, "d", mean=True)["o"]["ratio"] == 2.0
    # 600 rows (MRPC: its 1,200-row floor) in batches of 16, 2 epochs, 2 trained variants
    assert fine_tuning_steps(profile_params("quick")) == {
        "sst2": 152, "mrpc": 300, "rte": 152, "stsb": 152,
    }  # fmt: skip


def test_thread_and_optimizer_variants_report_every_candidate(settings):
    subject = _subject("tiny", 1)
    data = LabelledRows(subject.rows, subject.labels)
    batches = Batches.of(load_task("rte"), data, [[0, 1], [2, 3]])
    threads = compare_threads(subject, batches, settings, threads=2)
    assert list(threads) == ["2 threads (default)", "1 thread"]
    assert threads["2 threads (default)"]["ratio"] == 1.0
    optimizers = compare_optimizers(subject, batches, settings, rounds=1, step_s=2.0)
    assert list(optimizers) == ["training.py's (loop)", "foreach", "fused"]
    for row in optimizers.values():
        assert math.isclose(row["share_of_step"], row["seconds"] / 2.0)


def test_two_models_one_after_the_other_against_side_by_side(settings):
    subject = _subject("tiny", 1)
    data = LabelledRows(subject.rows, subject.labels)
    batches = Batches.of(load_task("rte"), data, [[0, 1], [2, 3]])
    before = [p.detach().clone() for p in subject.model.parameters()]
    both = compare_side_by_side(subject, batches, settings, threads=2, wait=0.0)
    assert list(both) == ["one after the other, 2 threads", "side by side, 1 thread each"]
    first, second = both.values()
    assert first["ratio"] == 1.0 and first["seconds"] > 0 and second["seconds"] > 0
    assert math.isclose(second["ratio"], second["seconds"] / first["seconds"])
    # the copies trained, not the subject's own model
    assert all(torch.equal(a, b) for a, b in zip(before, subject.model.parameters(), strict=True))
