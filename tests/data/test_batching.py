"""Training batches: `length_grouped_batches` returns every row once, in batches of similar
length, in a random order that the seed fixes; evaluation batches keep the rows' order."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.data.batching import in_order, length_grouped_batches, padded_batches

WINDOW_BATCHES = 50  # batches per window sorted by length


def random_lengths(count: int, seed: int = 0) -> list[int]:
    return np.random.default_rng(seed).integers(1, 101, size=count).tolist()


@pytest.mark.parametrize(("count", "batch_size"), [(1, 4), (30, 4), (1000, 16), (1600, 16)])
def test_the_batches_hold_every_row_once_and_one_at_most_is_short(count, batch_size):
    batches = length_grouped_batches(random_lengths(count), batch_size, seed=3)
    assert sorted(i for batch in batches for i in batch) == list(range(count))
    assert len(batches) == -(-count // batch_size)
    short = [len(b) for b in batches if len(b) != batch_size]
    assert short == ([count % batch_size] if count % batch_size else [])


def test_each_batch_spans_a_narrow_range_of_lengths():
    """Within a window of 50 batches the rows are sorted by length, so its batches' length
    ranges do not overlap: their spans add up to at most the window's whole range."""
    lengths = random_lengths(1000)  # 2 windows of 16 x 50 rows, lengths 1-100
    batches = length_grouped_batches(lengths, 16, seed=0)
    spans = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches]
    windows = -(-len(lengths) // (16 * WINDOW_BATCHES))
    assert sum(spans) <= windows * (max(lengths) - min(lengths))  # a plain shuffle: ~90 each
    assert max(spans) <= 12


def test_the_batch_order_is_random_and_fixed_by_the_seed():
    """Distinct lengths in one window make the same batches for every seed; only their order
    changes: each batch comes first under some seed, and a seed repeats its order."""
    lengths = list(np.random.default_rng(1).permutation(40))  # 10 batches of 4, one window
    by_seed = {seed: length_grouped_batches(lengths, 4, seed) for seed in range(200)}
    contents = {tuple(sorted(map(tuple, batches))) for batches in by_seed.values()}
    assert len(contents) == 1
    first_lengths = [max(lengths[i] for i in batches[0]) for batches in by_seed.values()]
    assert len(set(first_lengths)) == 10  # never-shuffled batches would start with the longest
    assert len({tuple(map(tuple, batches)) for batches in by_seed.values()}) == 200
    assert length_grouped_batches(lengths, 4, 5) == by_seed[5]


def test_the_batch_size_must_be_positive():
    with pytest.raises(ValueError, match="batch_size"):
        length_grouped_batches([3, 4], 0, seed=0)


def test_padded_batches_follow_the_lists_given():
    rows = [{"input_ids": [1] * n} for n in (2, 5, 3)]
    out = list(padded_batches(rows, [[2], [0, 1]], pad_id=0))
    assert [chosen for chosen, _ in out] == [[2], [0, 1]]
    assert [tuple(batch["input_ids"].shape) for _, batch in out] == [(1, 3), (2, 5)]
    assert in_order(5, 2) == [[0, 1], [2, 3], [4]]
