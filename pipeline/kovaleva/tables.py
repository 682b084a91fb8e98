"""Per-head tables of the Kovaleva et al. analyses, computed over an attention store.

Each function reads the maps it needs example by example (a few at a time), applies one
formula of `pipeline.kovaleva.measures`, and averages over examples. Tables count layers and
heads from 0, as every Python API does; the entry points (`analysis`, `framenet_heads`)
number them from 1 for the written tables (`pipeline.core.heads.numbered_from_one`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.attention.store import AttentionStore, TokenInfo
from pipeline.kovaleva.measures import (
    cls_attention,
    head_cosine,
    mean_over_examples,
    received_attention,
    type_scores,
)

VARIANTS = ("pretrained", "finetuned")


def head_frame(values: np.ndarray, column: str, first_layer: int = 0) -> pd.DataFrame:
    """A [L, H] array as a long table (layer, head, column); row l is layer `first_layer + l`."""
    layers, heads = np.meshgrid(
        np.arange(values.shape[0]) + first_layer, np.arange(values.shape[1]), indexing="ij"
    )
    return pd.DataFrame(
        {"layer": layers.ravel(), "head": heads.ravel(), column: values.ravel().astype(float)}
    )


def shared_examples(store: AttentionStore, task: str, limit: int | None) -> list[int]:
    """The first `limit` examples (None: all) present for both variants, by id."""
    common = set(store.example_ids(VARIANTS[0], task)) & set(store.example_ids(VARIANTS[1], task))
    return sorted(common)[:limit]


def _chunks(items: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def iter_example_maps(
    store: AttentionStore, variant: str, task: str, examples: Sequence[int], chunk: int
) -> Iterator[tuple[int, np.ndarray]]:
    """(example_id, maps [L, H, n, n]) for `examples`, reading `chunk` examples at a time."""
    for part in _chunks(examples, chunk):
        yield from store.iter_maps(variant, task, examples=part)


def cosine_table(
    store: AttentionStore, task: str, examples: Sequence[int], chunk: int = 16
) -> pd.DataFrame:
    """Fig. 5: per head, the mean over examples of cos(pre-trained map, fine-tuned map)."""

    def scores() -> Iterator[np.ndarray]:
        for part in tqdm(list(_chunks(examples, chunk)), desc=f"{task}: cosine", unit="chunk"):
            before = store.maps(VARIANTS[0], task, examples=part)
            after = store.maps(VARIANTS[1], task, examples=part)
            for example_id in part:
                yield head_cosine(before[example_id], after[example_id])  # [L, H]

    mean, count = mean_over_examples(scores())
    table = head_frame(mean, "cosine")
    table["examples"] = count
    return table


def token_type_tables(
    store: AttentionStore,
    task: str,
    examples: Sequence[int],
    masks: Mapping[int, Mapping[str, np.ndarray]],
    type_names: Sequence[str],
    chunk: int = 16,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 6 and Fig. 7 for both variants, as long tables.

    Fig. 6 (`received`): per head, the attention a token of the type receives, averaged over
    query positions, max over the type's tokens, averaged over the examples holding the type.
    Fig. 7 (`cls`): the same reduction over the last layer's [CLS] row instead.
    Examples without a token of a type are left out of that type's average (`examples`
    gives how many were averaged).
    """
    received_rows, cls_rows = [], []
    for variant in VARIANTS:
        received: dict[str, list[np.ndarray]] = defaultdict(list)
        cls: dict[str, list[np.ndarray]] = defaultdict(list)
        maps = iter_example_maps(store, variant, task, examples, chunk)
        for example_id, example in tqdm(
            maps, total=len(examples), desc=f"{task}: {variant} token types", unit="ex"
        ):
            for name, score in type_scores(received_attention(example), masks[example_id]).items():
                received[name].append(score)  # [L, H]
            for name, score in type_scores(cls_attention(example), masks[example_id]).items():
                cls[name].append(score)  # [1, H]
        for name in type_names:
            if not received[name]:
                continue  # no example holds this type
            for rows, scores, first_layer in (
                (received_rows, received[name], 0),
                (cls_rows, cls[name], store.num_layers - 1),
            ):
                mean, count = mean_over_examples(scores)
                frame = head_frame(mean, "score", first_layer)
                frame.insert(0, "type", name)
                frame.insert(0, "variant", variant)
                frame["examples"] = count
                rows.append(frame)
    return pd.concat(received_rows, ignore_index=True), pd.concat(cls_rows, ignore_index=True)


def grid_example(infos: Mapping[int, TokenInfo], max_tokens: int) -> int:
    """Fig. 10's example: the first of `infos` (example_id -> tokens, in analysis order) with
    at most `max_tokens` pieces, else the shortest."""
    short = [e for e, info in infos.items() if len(info) <= max_tokens]
    return short[0] if short else min(infos, key=lambda e: len(infos[e]))


def grid_table(maps: np.ndarray, tokens: Sequence[str]) -> pd.DataFrame:
    """Fig. 10: every weight of one example's maps [L, H, n, n], one row per cell."""
    num_layers, num_heads, n, _ = maps.shape
    layer, head, query, key = np.meshgrid(
        np.arange(num_layers), np.arange(num_heads), np.arange(n), np.arange(n), indexing="ij"
    )
    tokens = np.asarray(tokens, dtype=object)
    return pd.DataFrame(
        {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "query": query.ravel(),
            "key": key.ravel(),
            "query_token": tokens[query.ravel()],
            "key_token": tokens[key.ravel()],
            "weight": maps.ravel().astype(float),
        }
    )
