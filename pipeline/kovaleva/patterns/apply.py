"""Classifying every head's map on dev examples, and the class shares per task and variant.

The shares carry 95% bootstrap intervals over examples. A second ensemble, trained like the
classifier with other seeds, classifies the same maps: the largest change of any share
between the two is the classifier's seed stability.

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
from pipeline.core.stats import Interval, bootstrap_interval
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import PatternCNN, network_inputs, predict
from pipeline.kovaleva.patterns.heuristic import Thresholds, rule_by_head
from pipeline.kovaleva.patterns.roles import is_pair
from pipeline.kovaleva.patterns.settings import PatternSettings


@dataclass(frozen=True)
class ClassifiedMaps:
    predictions: pd.DataFrame  # one row per (variant, task, example, layer, head), from 0
    shares: pd.DataFrame  # task, variant, class, count, share, ci_low, ci_high (Fig. 2)
    metrics: dict[str, float]  # see `share_metrics`


def classify(
    ensembles: Sequence[Sequence[PatternCNN]],
    input_size: int,
    store: AttentionStore,
    variant: str,
    task: str,
    examples: Sequence[int],
    thresholds: Thresholds,
) -> pd.DataFrame:
    """One row per (example, layer, head): the classifier's class and probability, the
    seed-stability ensemble's class (`label_seed2`) and the rule's."""
    inputs, pairs, frames = [], [], []
    num_layers, num_heads = store.shape
    stream = store.iter_maps(variant, task, examples=examples)
    for example_id, maps in tqdm(
        stream, total=len(examples), desc=f"{task} {variant}", leave=False
    ):
        n = maps.shape[-1]
        flat = maps.reshape(num_layers * num_heads, n, n)  # [L*H, n, n], layer-major
        info = store.tokens(task, example_id)
        inputs.append(network_inputs(flat, info.tokens, input_size))  # [L*H, 5, S, S]
        pairs.append(torch.full((len(flat),), is_pair(info.tokens)))  # [L*H]
        rules = rule_by_head(maps, info.tokens, info.segment_ids, thresholds)
        rules.insert(0, "example_id", example_id)
        frames.append(rules)
    stacked, stacked_pairs = torch.cat(inputs), torch.cat(pairs)  # [maps, 5, S, S], [maps]
    first, second = (predict(e, stacked, stacked_pairs) for e in ensembles)  # [maps, C] each
    frame = pd.concat(frames, ignore_index=True)
    frame.insert(0, "variant", variant)
    frame.insert(1, "task", task)
    frame["label"] = np.asarray(CLASSES)[first.argmax(-1).numpy()]
    frame["confidence"] = first.max(-1).values.numpy()
    frame["label_seed2"] = np.asarray(CLASSES)[second.argmax(-1).numpy()]
    return frame


def example_shares(group: pd.DataFrame, column: str) -> pd.DataFrame:
    """Each example's share of every class among its heads' maps: [examples, classes]."""
    onehot = pd.DataFrame({c: (group[column] == c).to_numpy() for c in CLASSES})  # [M, C]
    return onehot.groupby(group["example_id"].to_numpy()).mean()


def class_shares(
    predictions: pd.DataFrame, n_resamples: int, seed: int, column: str = "label"
) -> pd.DataFrame:
    """Share of each class per (task, variant), with a 95% bootstrap interval over examples
    (the heads of one example move together): columns task, variant, class, count, share,
    ci_low, ci_high."""
    rows = []
    for (task, variant), group in predictions.groupby(["task", "variant"], sort=False):
        per_example = example_shares(group, column).to_numpy()  # [E, C]
        intervals = bootstrap_interval(
            lambda shares: shares.mean(axis=0), per_example, n_resamples=n_resamples, seed=seed
        )
        counts = group[column].value_counts()
        for name, interval in zip(CLASSES, intervals, strict=True):
            rows.append((task, variant, name, int(counts.get(name, 0)), *_as_row(interval)))
    columns = ["task", "variant", "class", "count", "share", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def _as_row(interval: Interval) -> tuple[float, float, float]:
    return interval.estimate, interval.low, interval.high


def seed_change(predictions: pd.DataFrame) -> float:
    """The largest change of any class share of any (task, variant) between the two
    networks' labels (`label`, `label_seed2`)."""
    keys = [predictions["task"], predictions["variant"]]
    first = pd.crosstab(keys, predictions["label"], normalize="index")
    second = pd.crosstab(keys, predictions["label_seed2"], normalize="index")
    first, second = first.align(second, fill_value=0.0)
    return float((first - second).abs().to_numpy().max())


def share_metrics(predictions: pd.DataFrame, shares: pd.DataFrame) -> dict[str, float]:
    """`<task>.<variant>.<class>` (share) with `_ci_low` / `_ci_high`; `<task>.<variant>.
    rule_agreement` (how often the CNN's class is the rule's); `seed_stability.
    max_share_change` (see `seed_change`)."""
    metrics: dict[str, float] = {}
    for task, variant, name, share, low, high in shares[
        ["task", "variant", "class", "share", "ci_low", "ci_high"]
    ].itertuples(index=False):
        key = f"{task}.{variant}.{name}"
        metrics.update(
            {key: round(share, 4), f"{key}_ci_low": round(low, 4), f"{key}_ci_high": round(high, 4)}
        )
    agreement = (
        (predictions["label"] == predictions["rule"])
        .groupby([predictions["task"], predictions["variant"]])
        .mean()
    )
    metrics.update({f"{t}.{v}.rule_agreement": round(a, 4) for (t, v), a in agreement.items()})
    metrics["seed_stability.max_share_change"] = round(seed_change(predictions), 4)
    return metrics


def classify_heads(
    ensembles: Sequence[Sequence[PatternCNN]],
    input_size: int,
    stores: Mapping[str, AttentionStore],
    settings: PatternSettings,
) -> ClassifiedMaps:
    """Every head's map on the first `settings.num_examples` dumped dev examples of each task
    and variant (the dump's own seeded sample), classified by both networks and the rule;
    the class shares with their intervals."""
    parts = []
    for task, store in stores.items():
        for variant in store.variants:
            examples = store.example_ids(variant, task)[: settings.num_examples]
            parts.append(
                classify(ensembles, input_size, store, variant, task, examples, settings.thresholds)
            )
    predictions = pd.concat(parts, ignore_index=True)
    resamples = settings.classifier.bootstrap_resamples
    shares = class_shares(predictions, resamples, settings.seed)
    return ClassifiedMaps(predictions, shares, share_metrics(predictions, shares))
