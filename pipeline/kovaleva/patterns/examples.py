"""The maps of Fig. 1: one confidently classified map per class, as a long table."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from pipeline.attention.store import AttentionStore
from pipeline.kovaleva.patterns import CLASSES

FIG1_VARIANT = "finetuned"  # the paper shows maps of the fine-tuned models
FIG1_MAX_TOKENS = 40  # Fig. 1 prefers maps short enough to label every token


def pick_examples(predictions: pd.DataFrame, variant: str, max_length: int) -> pd.DataFrame:
    """One map per predicted class for Fig. 1: the most confident prediction of `variant`
    that the heuristic agrees with (else any), among maps no longer than `max_length` tokens
    where there are such maps."""
    chosen = []
    for name in CLASSES:
        pool = predictions[(predictions["variant"] == variant) & (predictions["label"] == name)]
        if pool.empty:
            continue
        agreed = pool[pool["heuristic"] == name]
        pool = agreed if len(agreed) else pool
        short = pool[pool["length"] <= max_length]
        pool = short if len(short) else pool
        chosen.append(pool.loc[pool["confidence"].idxmax()])
    return pd.DataFrame(chosen).reset_index(drop=True)


def example_maps_table(picks: pd.DataFrame, stores: Mapping[str, AttentionStore]) -> pd.DataFrame:
    """The maps of `picks` as a long table: class, map id (layers, heads from 0), query, key,
    their tokens, weight."""
    rows = []
    for pick in picks.itertuples(index=False):
        store = stores[pick.task]
        maps = store.maps(pick.variant, pick.task, [pick.layer], [pick.head], [pick.example_id])[
            pick.example_id
        ][0, 0]  # [n, n]
        tokens = np.asarray(store.tokens(pick.task, pick.example_id).tokens)
        n = len(tokens)
        rows.append(
            pd.DataFrame(
                {
                    "class": pick.label,
                    "variant": pick.variant,
                    "task": pick.task,
                    "example_id": pick.example_id,
                    "layer": pick.layer,
                    "head": pick.head,
                    "query": np.repeat(np.arange(n), n),
                    "key": np.tile(np.arange(n), n),
                    "query_token": np.repeat(tokens, n),
                    "key_token": np.tile(tokens, n),
                    "weight": maps.reshape(-1),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def fig1_maps(predictions: pd.DataFrame, stores: Mapping[str, AttentionStore]) -> pd.DataFrame:
    """The long table of Fig. 1's maps, picked from `predictions` (see `pick_examples`)."""
    return example_maps_table(pick_examples(predictions, FIG1_VARIANT, FIG1_MAX_TOKENS), stores)
