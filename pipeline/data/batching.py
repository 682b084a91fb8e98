"""Which examples share a batch: by length, for little padding.

`length_batches` (evaluation: longest first, deterministic) and `length_grouped_batches`
(training: random, yet batches of similar length) are the only two batching rules in the
project; every stage that runs a model batches through them. Both return the batches
themselves (lists of row indices), which a loop iterates as they are: cutting a flat order
again would let the one short batch shift every later cut off its length group.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import torch

from pipeline.data.encoding import collate


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices in batches of similar length, longest first (ties in input order)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def length_grouped_batches(lengths: Sequence[int], batch_size: int, seed: int) -> list[list[int]]:
    """Shuffle, sort within windows of 50 batches by length, cut into batches, shuffle them.

    Batches hold examples of similar length (little padding) and still come in random order;
    the one short batch (the last window's last) lands anywhere in the shuffled order, so a
    loop must iterate these lists as they are. ceil(len(lengths) / batch_size) batches.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    window = batch_size * 50
    chunks = [order[i : i + window] for i in range(0, len(order), window)]
    order = np.concatenate([c[np.argsort([-lengths[j] for j in c], kind="stable")] for c in chunks])
    grouped = [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]
    return [grouped[k] for k in rng.permutation(len(grouped))]


def padded_batches(
    rows: list[dict[str, list[int]]],
    index_batches: Iterable[list[int]],
    pad_id: int,
    device: torch.device | str = "cpu",
    multiple: int = 1,
) -> Iterator[tuple[list[int], dict[str, torch.Tensor]]]:
    """(row indices, padded batch) pairs, one per list of `index_batches`, in their order;
    each batch padded to its longest row rounded up to a multiple of `multiple`."""
    for chosen in index_batches:
        yield chosen, collate([rows[i] for i in chosen], pad_id, device, multiple)


def in_order(count: int, batch_size: int) -> list[list[int]]:
    """Rows 0..count-1 in batches of `batch_size`, as given."""
    return [list(range(i, min(i + batch_size, count))) for i in range(0, count, batch_size)]
