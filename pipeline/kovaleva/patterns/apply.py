"""Classifying every head's map on dev examples, and the class shares per task and variant.

The shares carry 95% bootstrap intervals over examples. A second ensemble, trained like the
classifier with other seeds, classifies the same maps: the largest change of any share
between the two is the classifier's seed stability.

Two statistics of the vertical type per task and variant, with 95% bootstrap intervals over
examples (`vertical_statistics`):

    vertical_margin    = share(vertical) - max_{c != vertical} share(c)
                         (> 0: vertical is the most common type)
    vertical_on_special = #(maps called vertical whose strongest column is [CLS] or [SEP])
                          / #(maps called vertical)
                         (the strongest column of A [n, n] is argmax_j mean_i A[i, j] over the
                         example's n word pieces)

With a label folder's share round (`share_estimate.read_round`), the frozen stratifier
calls every map too (`call`), and each type's share per task and variant is estimated from
the round's labels by eye (`share_estimate.run_shares`): the shares the claims read.

`classify_heads` is the patterns_apply stage's entry point; `classify_map_set` classifies the
maps of any `.npz` map set (python -m tools.patterns_classify).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from pipeline.analyses.patterns_train.settings import PatternRule, PatternsConfig
from pipeline.attention.store import AttentionStore
from pipeline.core.errors import PipelineError
from pipeline.core.stats import Interval, bootstrap_interval
from pipeline.core.workers import shared_data, worker_pool
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import (
    PatternCNN,
    SavedClassifier,
    inputs_of,
    load_classifier,
    network_inputs,
    pairs_of,
    predict,
)
from pipeline.kovaleva.patterns.design import CALL
from pipeline.kovaleva.patterns.features import special_mask
from pipeline.kovaleva.patterns.heuristic import rule_by_head
from pipeline.kovaleva.patterns.inputs import impossible_types
from pipeline.kovaleva.patterns.mapsets import read_map_set
from pipeline.kovaleva.patterns.roles import is_pair
from pipeline.kovaleva.patterns.share_estimate import STRATIFIER_FILE, read_round, run_shares

log = logging.getLogger(__name__)
ESTIMATED = "estimated."  # the metrics' infix of the shares estimated from the share round
ESTIMATED_COLUMNS = ("task", "variant", "type", "share", "ci_low", "ci_high", "reason")


@dataclass(frozen=True)
class ClassifiedMaps:
    predictions: pd.DataFrame  # one row per (variant, task, example, layer, head), from 0
    shares: pd.DataFrame  # task, variant, class, count, share, ci_low, ci_high (Fig. 2)
    vertical: pd.DataFrame  # task, variant, statistic, maps, estimate, ci_low, ci_high
    metrics: dict[str, float]  # see `share_metrics`
    # task, variant, type, share, ci_low, ci_high, reason (share_estimate.run_shares); empty
    # without a share round
    estimated: pd.DataFrame

    def tables(self) -> dict[str, pd.DataFrame]:
        """The stage's tables by name (outputs/plots/patterns_apply/seed<N>/<name>.csv)."""
        return dict(shares=self.shares, vertical=self.vertical, estimated_shares=self.estimated)

    def summary(self) -> str:
        """The classifier's shares, the estimated ones and the seed stability, for the log."""
        estimated = (
            self.estimated.pivot_table("share", ["task", "variant"], "type").to_string()
            if len(self.estimated)
            else "(no share round)"
        )
        return (
            "pattern shares (the classifier's):\n"
            f"{self.shares.pivot_table('share', ['task', 'variant'], 'class').to_string()}\n"
            f"estimated from the share round:\n{estimated}\nlargest share change under the "
            f"second seed: {self.metrics['seed_stability.max_share_change']:.4f}"
        )


@dataclass(frozen=True)
class ShareRound:
    """A label folder's share round: its frozen stratifier's first ensemble, and the round's
    labelled maps (`share_estimate.read_round`)."""

    stratifier: Sequence[PatternCNN]
    labelled: pd.DataFrame


@dataclass(frozen=True)
class HeadInputs:
    """Every head's map of some dumped examples, as the CNN reads them."""

    inputs: torch.Tensor  # [maps, C, S, S]
    pairs: torch.Tensor  # bool [maps]: of a two-sentence input
    heads: pd.DataFrame  # one row per map: example_id, the rule's columns (`rule_by_head`:
    # layer and head from 0), strongest_special


def head_inputs(
    store: AttentionStore,
    variant: str,
    task: str,
    examples: Sequence[int] | None,
    input_size: int,
    input_channels: Sequence[str],
    thresholds: PatternRule,
) -> HeadInputs:
    """The CNN's inputs for every head's map of `examples` (None: all) of one task and
    variant, layer-major within each example, with the rule's class of each map and whether
    its strongest column is [CLS] or [SEP] (`strongest_special`)."""
    inputs, pairs, frames = [], [], []
    num_layers, num_heads = store.shape
    stream = store.iter_maps(variant, task, examples=examples)
    total = None if examples is None else len(examples)
    for example_id, maps in tqdm(stream, total=total, desc=f"{task} {variant}", leave=False):
        n = maps.shape[-1]
        flat = maps.reshape(num_layers * num_heads, n, n)  # [L*H, n, n], layer-major
        info = store.tokens(task, example_id)
        inputs.append(
            network_inputs(flat, info.tokens, input_size, input_channels)
        )  # [L*H, C, S, S]
        pairs.append(torch.full((len(flat),), is_pair(info.tokens)))  # [L*H]
        rules = rule_by_head(maps, info.tokens, info.segment_ids, thresholds)
        rules.insert(0, "example_id", example_id)
        rules["strongest_special"] = strongest_is_special(flat, info.tokens)
        frames.append(rules)
    return HeadInputs(torch.cat(inputs), torch.cat(pairs), pd.concat(frames, ignore_index=True))


def labelled_heads(
    found: HeadInputs,
    variant: str,
    task: str,
    first: torch.Tensor,
    second: torch.Tensor,
    call: torch.Tensor | None = None,
) -> pd.DataFrame:
    """One row per (example, layer, head) of `found`: the classifier's class and probability
    from its probabilities `first` [maps, C], the seed-stability ensemble's class
    (`label_seed2`) from `second`, the frozen stratifier's (`call`) from `call` [maps, C]
    where given, the rule's, and whether the map's strongest column is [CLS] or [SEP]
    (`strongest_special`)."""
    frame = found.heads
    frame.insert(0, "variant", variant)
    frame.insert(1, "task", task)
    frame["label"] = np.asarray(CLASSES)[first.argmax(-1).numpy()]
    frame["confidence"] = first.max(-1).values.numpy()
    frame["label_seed2"] = np.asarray(CLASSES)[second.argmax(-1).numpy()]
    if call is not None:
        frame[CALL] = np.asarray(CLASSES)[call.argmax(-1).numpy()]
    return frame


def _predict_shared(ensemble: int, inputs: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
    """In a worker: class probabilities [maps, C] of one of the ensembles its pool shares."""
    return predict(shared_data()[ensemble], inputs, pairs)


def strongest_is_special(maps: np.ndarray, tokens: Sequence[str]) -> np.ndarray:
    """bool [k]: whether the column with the largest mean weight over the queries of each
    map of maps [k, n, n] is [CLS] or [SEP]."""
    strongest = np.asarray(maps).mean(axis=1).argmax(axis=-1)  # [k]
    return special_mask(tokens)[strongest]


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


def vertical_margin(shares: np.ndarray) -> float:
    """Mean vertical share minus the largest other mean share, of per-example shares [E, C]."""
    mean = shares.mean(axis=0)  # [C]
    vertical = CLASSES.index("vertical")
    return float(mean[vertical] - np.delete(mean, vertical).max())


def vertical_on_special(on_special: np.ndarray, vertical: np.ndarray) -> float:
    """Pooled share of vertical maps whose strongest column is special, from per-example
    counts [E] of such maps and of vertical maps (NaN without vertical maps)."""
    total = vertical.sum()
    return float(on_special.sum() / total) if total else float("nan")


def vertical_statistics(
    predictions: pd.DataFrame, n_resamples: int, seed: int, column: str = "label"
) -> pd.DataFrame:
    """`vertical_margin` and `vertical_on_special` (see module) per (task, variant), with 95%
    bootstrap intervals resampling examples: columns task, variant, statistic, maps (the maps
    the statistic is over), estimate, ci_low, ci_high."""
    rows = []
    for (task, variant), group in predictions.groupby(["task", "variant"], sort=False):
        per_example = example_shares(group, column).to_numpy()  # [E, C]
        margin = bootstrap_interval(
            vertical_margin, per_example, n_resamples=n_resamples, seed=seed
        )
        vertical = group[column] == "vertical"
        counts = pd.DataFrame(
            {"special": vertical & group["strongest_special"], "vertical": vertical}
        ).groupby(group["example_id"].to_numpy())
        counts = counts.sum().astype(int)  # [E, 2]
        on_special = bootstrap_interval(
            vertical_on_special,
            counts["special"].to_numpy(),
            counts["vertical"].to_numpy(),
            n_resamples=n_resamples,
            seed=seed,
        )
        rows.append((task, variant, "vertical_margin", len(group), *_as_row(margin)))
        rows.append(
            (task, variant, "vertical_on_special", int(vertical.sum()), *_as_row(on_special))
        )
    columns = ["task", "variant", "statistic", "maps", "estimate", "ci_low", "ci_high"]
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


def share_metrics(
    predictions: pd.DataFrame,
    shares: pd.DataFrame,
    vertical: pd.DataFrame,
    estimated: pd.DataFrame,
) -> dict[str, float]:
    """`<task>.<variant>.<class>` (the classifier's share), `<task>.<variant>.<statistic>`
    (see `vertical_statistics`) and `<task>.<variant>.estimated.<type>` (the share estimated
    from the share round, `first_three` among the types), each with `_ci_low` / `_ci_high`
    and left out where undefined; `<task>.<variant>.rule_agreement` (how often the CNN's
    class is the rule's); `seed_stability.max_share_change` (see `seed_change`)."""
    metrics: dict[str, float] = {}
    columns = ["task", "variant", "name", "estimate", "ci_low", "ci_high"]
    estimates = pd.concat(
        [
            shares.rename(columns={"class": "name", "share": "estimate"})[columns],
            vertical.rename(columns={"statistic": "name"})[columns],
            estimated.assign(name=ESTIMATED + estimated["type"])
            .rename(columns={"share": "estimate"})
            .reindex(columns=columns),
        ]
    )
    for task, variant, name, estimate, low, high in estimates.itertuples(index=False):
        if np.isnan(estimate):
            continue  # undefined (no map called vertical): no key, since NaN never diffs equal
        key = f"{task}.{variant}.{name}"
        metrics.update(
            {
                key: round(estimate, 4),
                f"{key}_ci_low": round(low, 4),
                f"{key}_ci_high": round(high, 4),
            }
        )
    agreement = (
        (predictions["label"] == predictions["rule"])
        .groupby([predictions["task"], predictions["variant"]])
        .mean()
    )
    metrics.update({f"{t}.{v}.rule_agreement": round(a, 4) for (t, v), a in agreement.items()})
    metrics["seed_stability.max_share_change"] = round(seed_change(predictions), 4)
    return metrics


def load_share_round(folder: Path, classifier: SavedClassifier) -> ShareRound | None:
    """The share round of the label folder `folder`, or None (logged) where it has no frozen
    stratifier; refused where the stratifier reads maps unlike `classifier` (the run's)."""
    if not (folder / STRATIFIER_FILE).exists():
        log.warning(
            "%s has no share round (no %s): no share is estimated, and the share claims are "
            "not testable; draw one with tools.patterns_round",
            folder,
            STRATIFIER_FILE,
        )
        return None
    stratifier = load_classifier(folder / STRATIFIER_FILE)
    read_by = (stratifier.input_size, stratifier.input_channels)
    if read_by != (classifier.input_size, classifier.input_channels):
        raise PipelineError(
            f"{folder / STRATIFIER_FILE} reads maps of size {read_by[0]} with channels "
            f"{list(read_by[1])}, the classifier {classifier.input_size} with "
            f"{list(classifier.input_channels)}; set patterns.classifier.input_size and "
            "input_channels back to the stratifier's"
        )
    return ShareRound(stratifier.ensembles[0], read_round(folder))


def classify_heads(
    ensembles: Sequence[Sequence[PatternCNN]],
    input_size: int,
    input_channels: Sequence[str],
    stores: Mapping[str, AttentionStore],
    settings: PatternsConfig,
    seed: int,
    share_round: ShareRound | None = None,
) -> ClassifiedMaps:
    """Every head's map on the first `settings.num_examples` dumped dev examples of each task
    and variant (the dump's own seeded sample), classified by both ensembles, the share
    round's stratifier (where given) and the rule; the class shares with their intervals
    (bootstrap seeded by `seed`), and the shares estimated from the round. The ensembles
    predict in `settings.classifier.workers` processes of one thread each: the
    probabilities are those of one thread."""
    if share_round is not None:
        ensembles = [*ensembles, share_round.stratifier]
    pending = []
    with worker_pool(max(settings.classifier.workers, 1), ensembles) as pool:
        for task, store in stores.items():  # the next maps are read while workers predict
            for variant in store.variants:
                examples = store.example_ids(variant, task)[: settings.num_examples]
                found = head_inputs(
                    store, variant, task, examples, input_size, input_channels, settings.heuristic
                )
                futures = [
                    pool.submit(_predict_shared, k, found.inputs, found.pairs)
                    for k in range(len(ensembles))
                ]
                pending.append((found, variant, task, futures))
        parts = [
            labelled_heads(found, variant, task, *(f.result() for f in futures))
            for found, variant, task, futures in pending
        ]
    predictions = pd.concat(parts, ignore_index=True)
    resamples = settings.classifier.bootstrap_resamples
    shares = class_shares(predictions, resamples, seed)
    vertical = vertical_statistics(predictions, resamples, seed)
    estimated = (
        pd.DataFrame(columns=list(ESTIMATED_COLUMNS))
        if share_round is None
        else run_shares(
            predictions,
            share_round.labelled,
            n_resamples=resamples,
            seed=seed,
            impossible=impossible_types(stores),
        )
    )
    metrics = share_metrics(predictions, shares, vertical, estimated)
    return ClassifiedMaps(predictions, shares, vertical, metrics, estimated)


def classify_map_set(maps_path: Path, classifier_path: Path) -> pd.DataFrame:
    """id, label of every map of an `.npz` map set, by the classifier saved at
    `classifier_path` (its first ensemble)."""
    maps = read_map_set(maps_path)
    classifier = load_classifier(classifier_path)
    entries = list(maps.values())
    inputs = inputs_of(entries, classifier.input_size, classifier.input_channels)  # [N, C, S, S]
    probs = predict(classifier.ensembles[0], inputs, pairs_of(entries))  # [N, C]
    labels = [CLASSES[i] for i in probs.argmax(-1).tolist()]
    return pd.DataFrame({"id": list(maps), "label": labels})
