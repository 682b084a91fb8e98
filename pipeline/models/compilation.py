"""The compiled path (the `compile` setting), shared by fine-tuning and the inference stages.

Under `compile.enabled` a forward function runs `torch.compile`d with static shapes. Batch
lengths are padded up to a multiple of `compile.pad_multiple` (`bucketed_width`), so that one
graph serves every batch of the same [B, T] shape; dynamo's recompile limit is raised to the
number of shapes a run will meet, so none falls back to eager. Off, every function is
returned as it is and batches are padded to their longest row (multiple 1).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import torch

from pipeline.core.schema import CompileConfig
from pipeline.data.encoding import bucketed_width

log = logging.getLogger(__name__)

DYNAMO_DEFAULT_LIMIT = 8  # torch._dynamo.config.recompile_limit's default


def compiled(
    function: Callable[..., Any], settings: CompileConfig | None, shapes: int
) -> Callable[..., Any]:
    """`function` itself, or under `settings` its `torch.compile`d version, with static
    shapes and room for `shapes` graphs (one per distinct input shape: the caller buckets
    lengths with `settings.pad_multiple`, so that a graph serves many batches)."""
    if settings is None or not settings.enabled:
        return function
    graph = torch.compile(function, backend=settings.backend, dynamic=False)

    def call(*args: Any, **kwargs: Any) -> Any:
        with torch._dynamo.config.patch(recompile_limit=max(shapes, DYNAMO_DEFAULT_LIMIT)):
            return graph(*args, **kwargs)

    return call


def pad_multiple(settings: CompileConfig | None) -> int:
    """The length multiple batches are padded to: `settings.pad_multiple` when compiled, else 1."""
    return settings.pad_multiple if settings is not None and settings.enabled else 1


def batch_shapes(lengths: Sequence[int], index_batches: list[list[int]], multiple: int) -> int:
    """How many distinct [B, T] shapes `index_batches` make, padded to multiples of `multiple`."""
    return len(
        {(len(b), bucketed_width(max(lengths[i] for i in b), multiple)) for b in index_batches}
    )


def padding_share(lengths: Sequence[int], index_batches: list[list[int]], multiple: int) -> float:
    """The share of the padded batches' positions that are padding, each batch padded to its
    longest row rounded up to a multiple of `multiple`."""
    padded = sum(
        len(b) * bucketed_width(max(lengths[i] for i in b), multiple) for b in index_batches
    )
    real = sum(lengths[i] for b in index_batches for i in b)
    return (padded - real) / padded if padded else 0.0


def log_padding(
    what: str, lengths: Sequence[int], index_batches: list[list[int]], multiple: int
) -> float:
    """Log the padding `what` computes on (and, bucketed, what bucketing adds); return its
    share of the positions."""
    share = padding_share(lengths, index_batches, multiple)
    log.info(
        "%s: padding %.1f%% of positions (%.1f%% at the batch's longest row), "
        "%d batch shapes with lengths padded to a multiple of %d",
        what,
        100 * share,
        100 * padding_share(lengths, index_batches, 1),
        batch_shapes(lengths, index_batches, multiple),
        multiple,
    )
    return share
