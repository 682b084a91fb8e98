"""Classifying every head's map on dev examples, and the class shares per task and variant.

`classify_heads` is the patterns_apply stage's entry point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from pipeline.attention.store import AttentionStore
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import PatternCNN, predict, resize_maps
from pipeline.kovaleva.patterns.examples import fig1_maps
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.heuristic import Thresholds, heuristic_labels
from pipeline.kovaleva.patterns.settings import PatternSettings


@dataclass(frozen=True)
class ClassifiedMaps:
    predictions: pd.DataFrame  # one row per (variant, task, example, layer, head), from 0
    shares: pd.DataFrame  # task, variant, class, count, share (Fig. 2)
    examples: pd.DataFrame  # Fig. 1's maps as a long table (see examples.example_maps_table)
    metrics: dict[str, float]  # see `share_metrics`


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


def share_metrics(predictions: pd.DataFrame, shares: pd.DataFrame) -> dict[str, float]:
    """`<task>_<variant>_<class>`: each class's share; `<task>_<variant>_heuristic_agreement`:
    how often the CNN's class is the heuristic's (both rounded to 4 digits)."""
    agreement = (
        (predictions["label"] == predictions["heuristic"])
        .groupby([predictions["task"], predictions["variant"]])
        .mean()
    )
    metrics = {
        f"{task}_{variant}_{name}": round(share, 4)
        for task, variant, name, _, share in shares.itertuples(index=False)
    }
    metrics.update({f"{t}_{v}_heuristic_agreement": round(a, 4) for (t, v), a in agreement.items()})
    return metrics


def classify_heads(
    model: PatternCNN,
    input_size: int,
    stores: Mapping[str, AttentionStore],
    settings: PatternSettings,
) -> ClassifiedMaps:
    """Every head's map on the first `settings.num_examples` dumped dev examples of each task
    and variant, classified by the CNN and the heuristic; their class shares; Fig. 1's maps."""
    parts = []
    for task, store in stores.items():
        for variant in store.variants:
            examples = store.example_ids(variant, task)[: settings.num_examples]
            parts.append(
                classify(model, input_size, store, variant, task, examples, settings.thresholds)
            )
    predictions = pd.concat(parts, ignore_index=True)
    shares = class_shares(predictions)
    return ClassifiedMaps(
        predictions, shares, fig1_maps(predictions, stores), share_metrics(predictions, shares)
    )
