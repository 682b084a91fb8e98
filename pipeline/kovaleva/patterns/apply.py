"""Classifying every head's map on dev examples, and the class shares per task and variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from pipeline.attention.store import AttentionStore
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import PatternCNN, predict, resize_maps
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.heuristic import Thresholds, heuristic_labels


def classify(
    model: PatternCNN,
    input_size: int,
    store: AttentionStore,
    variant: str,
    task: str,
    examples: Sequence[int],
    thresholds: Thresholds,
) -> pd.DataFrame:
    """One row per (example, layer, head): the CNN's class and probability, and the rule's."""
    inputs, frames = [], []
    num_layers, num_heads = store.shape
    stream = store.iter_maps(variant, task, examples=examples)
    for example_id, maps in tqdm(
        stream, total=len(examples), desc=f"{task} {variant}", leave=False
    ):
        n = maps.shape[-1]
        flat = maps.reshape(num_layers * num_heads, n, n)  # [L*H, n, n], layer-major
        inputs.append(resize_maps(torch.from_numpy(flat), input_size))  # [L*H, 1, S, S]
        info = store.tokens(task, example_id)
        features = map_features(flat, special_mask(info.tokens), info.segment_ids)
        frames.append(
            pd.DataFrame(
                {
                    "example_id": example_id,
                    "layer": np.repeat(np.arange(num_layers), num_heads),
                    "head": np.tile(np.arange(num_heads), num_layers),
                    "length": n,
                    "heuristic": heuristic_labels(features, thresholds),
                }
            )
        )
    probs = predict(model, torch.cat(inputs))  # [maps, C]
    frame = pd.concat(frames, ignore_index=True)
    frame.insert(0, "variant", variant)
    frame.insert(1, "task", task)
    frame["label"] = np.asarray(CLASSES)[probs.argmax(-1).numpy()]
    frame["confidence"] = probs.max(-1).values.numpy()
    return frame


def class_shares(predictions: pd.DataFrame, column: str = "label") -> pd.DataFrame:
    """Share of each class per (task, variant): columns task, variant, class, count, share."""
    index = pd.MultiIndex.from_product(
        [
            list(dict.fromkeys(predictions["task"])),
            sorted(predictions["variant"].unique()),
            list(CLASSES),
        ],
        names=["task", "variant", "class"],
    )
    counts = (
        predictions.groupby(["task", "variant", column])
        .size()
        .rename_axis(index.names)
        .reindex(index, fill_value=0)
        .rename("count")
        .reset_index()
    )
    counts["share"] = counts["count"] / counts.groupby(["task", "variant"])["count"].transform(
        "sum"
    )
    return counts


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
    """The maps of `picks` as a long table: class, map id, query, key, their tokens, weight."""
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
