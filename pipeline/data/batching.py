"""Which examples share a batch: by length, for little padding.

`length_batches` (evaluation: longest first, deterministic) and `length_grouped_order`
(training: random, yet batches of similar length) are the only two batching rules in the
project; every stage that runs a model batches through them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch

from pipeline.data.encoding import collate


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices in batches of similar length, longest first (ties in input order)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def length_grouped_order(lengths: list[int], batch_size: int, seed: int) -> list[int]:
    """Shuffle, then sort within windows of 50 batches by length, then shuffle the batches.

    Batches hold examples of similar length (little padding) and still come in random order.
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    window = batch_size * 50
    chunks = [order[i : i + window] for i in range(0, len(order), window)]
    order = np.concatenate([c[np.argsort([-lengths[j] for j in c], kind="stable")] for c in chunks])
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return [int(j) for k in rng.permutation(len(batches)) for j in batches[k]]


def batches(
    rows: list[dict[str, list[int]]],
    batch_size: int,
    pad_id: int,
    device: torch.device | str = "cpu",
    order: list[int] | None = None,
) -> Iterator[tuple[list[int], dict[str, torch.Tensor]]]:
    """(row indices, padded batch) pairs, in `order` (default: as given)."""
    order = list(range(len(rows))) if order is None else order
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        yield chosen, collate([rows[i] for i in chosen], pad_id, device)
