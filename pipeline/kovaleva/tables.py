"""Per-head tables of the Kovaleva et al. analyses, computed over an attention store.

Each function reads the maps it needs example by example (a few at a time), applies one
formula of `pipeline.kovaleva.formulas` per example, and averages over examples with a 95%
percentile bootstrap interval over examples (`_ci_low`, `_ci_high`; seeded, through
pipeline.core.stats). Tables count layers and
heads from 0, as every Python API does; the entry points (`analysis`, `framenet_heads`)
number them from 1 for the written tables (`pipeline.core.head_names.numbered_from_one`).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.attention.store import AttentionStore, TokenInfo
from pipeline.core.stats import Interval, bootstrap_interval
from pipeline.kovaleva.formulas import (
    cls_attention,
    head_cosine,
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


def mean_intervals(scores: np.ndarray, n_resamples: int, seed: int) -> list[Interval]:
    """Per column of per-example scores [N, K], the mean over the examples that have a score
    (NaN: none; left out) with its 95% percentile bootstrap interval over examples: K
    Intervals. Resampling whole rows keeps every column of an example together."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample without a column's type
        return bootstrap_interval(  # vectorized: rows [..., N, K] of all resamples at once
            lambda rows: np.nanmean(rows, axis=-2),
            scores,
            n_resamples=n_resamples,
            seed=seed,
            vectorized=True,
        )


def interval_columns(intervals: Sequence[Interval], column: str) -> dict[str, np.ndarray]:
    """{column, column_ci_low, column_ci_high}: the estimates and bounds as arrays."""
    return {
        column: np.array([i.estimate for i in intervals]),
        f"{column}_ci_low": np.array([i.low for i in intervals]),
        f"{column}_ci_high": np.array([i.high for i in intervals]),
    }


def head_interval_frame(
    scores: np.ndarray, column: str, n_resamples: int, seed: int, first_layer: int = 0
) -> pd.DataFrame:
    """Per-example head scores [N, L, H] (NaN: the example has none) as a long table: per
    head, the mean over examples with its interval (`column`, `_ci_low`, `_ci_high`) and
    how many examples were averaged; row l is layer `first_layer + l`."""
    num, layers, heads = scores.shape
    flat = scores.reshape(num, layers * heads)  # [N, L*H]
    columns = interval_columns(mean_intervals(flat, n_resamples, seed), column)
    table = head_frame(columns[column].reshape(layers, heads), column, first_layer)
    for name in (f"{column}_ci_low", f"{column}_ci_high"):
        table[name] = columns[name]
    table["examples"] = np.isfinite(flat).sum(axis=0)
    return table


def layer_interval_frame(
    scores: np.ndarray, column: str, n_resamples: int, seed: int, first_layer: int = 0
) -> pd.DataFrame:
    """Per layer, the mean over examples of the example's mean over heads (per-example head
    scores [N, L, H]), with its interval over examples and how many examples were averaged."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an example without the type: NaN
        by_layer = np.nanmean(scores, axis=-1)  # [N, L]
    table = pd.DataFrame(
        {
            "layer": np.arange(scores.shape[1]) + first_layer,
            **interval_columns(mean_intervals(by_layer, n_resamples, seed), column),
        }
    )
    table["examples"] = np.isfinite(by_layer).sum(axis=0)
    return table


def example_cosines(
    store: AttentionStore, task: str, examples: Sequence[int], chunk: int = 16
) -> np.ndarray:
    """Fig. 5: per example and head, cos(pre-trained map, fine-tuned map): [N, L, H]."""
    scores = []
    for part in tqdm(list(_chunks(examples, chunk)), desc=f"{task}: cosine", unit="chunk"):
        before = store.maps(VARIANTS[0], task, examples=part)
        after = store.maps(VARIANTS[1], task, examples=part)
        scores.extend(head_cosine(before[e], after[e]) for e in part)  # [L, H] each
    return np.stack(scores)


def last_two_margin(by_layer: np.ndarray) -> float:
    """How much more fine-tuning changed the last two layers than any other layer, from
    per-example layer cosines [N, L]: with change_l = 1 - mean_n cos_nl,

        margin = min(change of the last two layers) - max(change of the other layers)

    (> 0: the last two layers changed most)."""
    change = 1.0 - by_layer.mean(axis=0)  # [L]
    return float(change[-2:].min() - change[:-2].max())


@dataclass(frozen=True)
class CosineSummary:
    """Fig. 5's numbers, layers and heads counted from 0."""

    heads: pd.DataFrame  # per head: layer, head, cosine (+ _ci_low, _ci_high), examples
    layers: pd.DataFrame  # per layer: layer, cosine (+ _ci_low, _ci_high), examples
    mean: Interval  # the mean over heads and examples
    margin: Interval | None  # `last_two_margin`; None with fewer than three layers


def cosine_summary(scores: np.ndarray, n_resamples: int, seed: int) -> CosineSummary:
    """Per head, per layer and overall means of per-example cosines [N, L, H] with their
    95% intervals over examples (the same seeded resamples for every statistic)."""
    by_layer = scores.mean(axis=-1)  # [N, L]
    overall = bootstrap_interval(
        lambda rows: rows.mean(), by_layer, n_resamples=n_resamples, seed=seed
    )
    margin = None
    if scores.shape[1] > 2:
        margin = bootstrap_interval(last_two_margin, by_layer, n_resamples=n_resamples, seed=seed)
    return CosineSummary(
        heads=head_interval_frame(scores, "cosine", n_resamples, seed),
        layers=layer_interval_frame(scores, "cosine", n_resamples, seed),
        mean=overall,
        margin=margin,
    )


def example_type_scores(
    store: AttentionStore,
    task: str,
    variant: str,
    examples: Sequence[int],
    masks: Mapping[int, Mapping[str, np.ndarray]],
    type_names: Sequence[str],
    chunk: int,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Figs. 6 and 7 per example: {type: [N, L, H]} of the attention the type receives and
    {type: [N, 1, H]} of the last layer's [CLS] row; NaN where the example lacks the type."""
    shape = (len(examples), store.num_layers, store.num_heads)
    received = {name: np.full(shape, np.nan) for name in type_names}
    cls = {name: np.full((len(examples), 1, store.num_heads), np.nan) for name in type_names}
    row = {example_id: n for n, example_id in enumerate(examples)}
    maps = iter_example_maps(store, variant, task, examples, chunk)
    for example_id, example in tqdm(
        maps, total=len(examples), desc=f"{task}: {variant} token types", unit="ex"
    ):
        n = row[example_id]
        for name, score in type_scores(received_attention(example), masks[example_id]).items():
            received[name][n] = score  # [L, H]
        for name, score in type_scores(cls_attention(example), masks[example_id]).items():
            cls[name][n] = score  # [1, H]
    return received, cls


@dataclass(frozen=True)
class TokenTypeTables:
    """Figs. 6 and 7 for both variants, layers and heads counted from 0."""

    received: pd.DataFrame  # Fig. 6 per variant, type and head: score (+ CI), examples
    received_layers: pd.DataFrame  # Fig. 6 per variant, type and layer (mean over heads)
    cls: pd.DataFrame  # Fig. 7 per variant, type and last-layer head


def token_type_tables(
    store: AttentionStore,
    task: str,
    examples: Sequence[int],
    masks: Mapping[int, Mapping[str, np.ndarray]],
    type_names: Sequence[str],
    chunk: int = 16,
    n_resamples: int = 1000,
    seed: int = 0,
) -> TokenTypeTables:
    """Fig. 6 and Fig. 7 for both variants, as long tables with 95% intervals over examples.

    Fig. 6 (`received`): per head, the attention a token of the type receives, averaged over
    query positions, max over the type's tokens, averaged over the examples holding the type;
    `received_layers` averages each example's heads of a layer first. Fig. 7 (`cls`): the
    same reduction over the last layer's [CLS] row instead. Examples without a token of a
    type are left out of that type's average (`examples` gives how many were averaged).
    """
    tables: dict[str, list[pd.DataFrame]] = defaultdict(list)
    for variant in VARIANTS:
        received, cls = example_type_scores(
            store, task, variant, examples, masks, type_names, chunk
        )
        for name in type_names:
            if not np.isfinite(received[name]).any():
                continue  # no example holds this type
            for key, frame in (
                ("received", head_interval_frame(received[name], "score", n_resamples, seed)),
                ("layers", layer_interval_frame(received[name], "score", n_resamples, seed)),
                (
                    "cls",
                    head_interval_frame(
                        cls[name], "score", n_resamples, seed, store.num_layers - 1
                    ),
                ),
            ):
                frame.insert(0, "type", name)
                frame.insert(0, "variant", variant)
                tables[key].append(frame)
    return TokenTypeTables(
        *(pd.concat(tables[key], ignore_index=True) for key in ("received", "layers", "cls"))
    )


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
