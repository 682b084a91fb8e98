"""The clark_heads analysis of one task's attention store (Clark et al. 2019, Secs. 3, 3.3, 6).

One pass over the stored maps feeds three running sums: each head's attention to each
target (`attend`), its entropy (`entropy`) and the Jensen-Shannon distances between heads
(`clustering`), and each example's same- and different-layer distance means. From them
come the tables the stage writes, the MDS embedding with the heads' behaviour labels, and
the headline numbers, among them `same_layer_margin`, each layer's attention to [SEP]
(`sep_attention.L<n>`, layers from 1) and the middle layers' attention to [SEP] and to the
sink tokens (`sep_middle`, `sink_middle`: pipeline.clark.attend), each with its interval
over examples.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.analyses.clark_heads.settings import ClarkHeadsConfig
from pipeline.attention.measures import measure_store
from pipeline.attention.store import AttentionStore
from pipeline.clark import figures
from pipeline.clark.attend import TargetAttention
from pipeline.clark.clustering import (
    behaviours,
    embed,
    js_divergence_sum,
    layer_pair_means,
    same_layer_margin,
)
from pipeline.clark.entropy import HeadEntropy
from pipeline.core.head_names import head_name, layer_name, numbered_from_one
from pipeline.core.io import Captioned
from pipeline.core.stats import Interval

log = logging.getLogger(__name__)

PEAK_TARGETS = ("cls", "sep", "punct", "previous", "next")


@dataclass(frozen=True)
class HeadsReport:
    """Tables with 0-based `layer` and `head` (numbered from 1 when written); metrics ready
    to write, layers in them numbered from 1."""

    targets: pd.DataFrame  # layer, head, target, attention
    entropy: pd.DataFrame  # layer, head, entropy, cls_entropy, uniform
    clusters: pd.DataFrame  # layer, head, behaviour, x, y
    distances: pd.DataFrame  # head (L1-H1 names), then one column per head: D(row, column)
    metrics: dict[str, float | int]
    examples: int  # examples read from the store
    sep_layers: list[Interval]  # each layer's attention to [SEP], first layer first (or none)
    sink_layers: list[Interval]  # ... and to any sink token ([CLS], [SEP], punctuation)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem, layers and heads numbered from 1."""
        return {
            "targets": numbered_from_one(self.targets),
            "entropy": numbered_from_one(self.entropy),
            "clusters": numbered_from_one(self.clusters),
            "distances": self.distances,
        }


def headline(targets: pd.DataFrame, entropy: pd.DataFrame) -> dict[str, float | int]:
    """Flat metrics: the peak layer-mean attention to each target (and that layer, counted
    from 1), and entropy summaries."""
    layer_means = numbered_from_one(targets).groupby(["target", "layer"])["attention"].mean()
    metrics: dict[str, float | int] = {}
    for target in PEAK_TARGETS:
        metrics[f"{target}_peak_layer_attention"] = float(layer_means[target].max())
        metrics[f"{target}_peak_layer"] = int(layer_means[target].idxmax())
    last_layer = entropy["layer"] == entropy["layer"].max()
    metrics["entropy_mean"] = float(entropy["entropy"].mean())
    metrics["uniform_entropy"] = float(entropy["uniform"].iloc[0])
    metrics["cls_entropy_last_layer"] = float(entropy.loc[last_layer, "cls_entropy"].mean())
    return metrics


def analyse_heads(
    store: AttentionStore,
    task: str,
    seed: int,
    settings: ClarkHeadsConfig,
) -> HeadsReport:
    """Where the heads of `settings.variant` attend on the first `settings.num_examples`
    stored examples of `task` (all when None). `seed` seeds the MDS; `settings.behaviour`
    holds the `focus` and `broad` thresholds of the behaviour labels
    (pipeline.clark.clustering.behaviours); `settings.measure` reads the maps as weights,
    value-weighted norms or rollout (pipeline.attention.measures);
    `settings.bootstrap_resamples` sets the intervals of `same_layer_margin` (left out when a
    layer has one head, the model one layer, or the store one example) and of each layer's
    attention to [SEP] (left out with fewer than two examples that have a [SEP])."""
    variant, num_examples = settings.variant, settings.num_examples
    store = measure_store(store, settings.measure)
    num_layers, num_heads = store.shape
    examples = store.example_ids(variant, task)[:num_examples]
    tokens = store.all_tokens(task)
    targets = TargetAttention(num_layers, num_heads, settings.punctuation)
    entropy = HeadEntropy(num_layers, num_heads)
    distances = np.zeros((num_layers * num_heads,) * 2)  # [K, K], K = L * H heads
    pair_means, lengths = [], []  # per example: [2] same- and different-layer means; n
    maps_iter = store.iter_maps(variant, task, examples=examples)
    for example_id, maps in tqdm(maps_iter, total=len(examples), desc=f"clark heads {task}"):
        info = tokens[example_id]
        targets.add(maps, info.tokens, info.word_ids)  # maps [L, H, n, n]
        entropy.add(maps)
        example_distances = js_divergence_sum(maps.reshape(-1, *maps.shape[-2:]))  # [K, K]
        distances += example_distances
        if num_heads > 1 and num_layers > 1:
            pair_means.append(layer_pair_means(example_distances, num_layers, num_heads))
            lengths.append(maps.shape[-1])

    target_table, entropy_table = targets.table(), entropy.table()
    points = embed(distances, seed=seed)  # [K, 2], heads in (layer, head) order
    behaviour = settings.behaviour
    labels = behaviours(target_table, entropy_table, behaviour.focus, behaviour.broad)
    names = [head_name(layer, head) for layer in range(num_layers) for head in range(num_heads)]
    metrics = headline(target_table, entropy_table) | {"examples": len(examples)}
    if len(pair_means) > 1:  # an interval needs two or more examples
        margin = same_layer_margin(
            np.stack(pair_means), np.asarray(lengths), settings.bootstrap_resamples, seed
        )
        metrics |= margin.as_dict("same_layer_margin")
    sep_layers, sink_layers = [], []
    if len(targets.sep_layers) > 1:
        resamples = settings.bootstrap_resamples
        sep_layers = targets.by_layer("sep", resamples, seed)
        sink_layers = targets.by_layer("sink", resamples, seed)
        for layer, interval in enumerate(sep_layers):  # 0-based: named L1, L2, ...
            metrics |= interval.as_dict(f"sep_attention.{layer_name(layer)}")
        for target in ("sep", "sink"):
            metrics |= targets.middle_mean(target, resamples, seed).as_dict(f"{target}_middle")
    log.info("clark_heads %s: %s", task, metrics)
    return HeadsReport(
        targets=target_table,
        entropy=entropy_table,
        clusters=labels.assign(x=points[:, 0], y=points[:, 1]),
        distances=pd.DataFrame(distances, index=names, columns=names).reset_index(names="head"),
        metrics=metrics,
        examples=len(examples),
        sep_layers=sep_layers,
        sink_layers=sink_layers,
    )


def heads_figures(
    report: HeadsReport, task: str, model: str, settings: ClarkHeadsConfig
) -> dict[str, Captioned]:
    """Where the heads attend, their entropy and their clusters, by file stem."""
    where = f"{task}, {settings.variant} {model}, {report.examples} dev examples"
    setup = {"variant": settings.variant, "examples": report.examples}
    behaviour = {"focus": settings.behaviour.focus, "broad": settings.behaviour.broad}
    drawn = {
        "targets": Captioned(
            figures.targets_per_layer(report.targets),
            f"Average attention of each head (dots) and layer mean (line) to each token type "
            f"({where}).",
            setup,
        ),
        "entropy": Captioned(
            figures.entropy_per_layer(report.entropy),
            f"Attention entropy per head, over all tokens and from [CLS], against uniform "
            f"attention ({where}).",
            setup,
        ),
        "clusters": Captioned(
            figures.head_clusters(report.clusters),
            f"Heads placed by MDS of their summed Jensen-Shannon divergences ({where}).",
            setup | behaviour,
        ),
    }
    if report.sep_layers:
        drawn["sep_by_layer"] = Captioned(
            figures.sep_by_layer(report.sep_layers, report.sink_layers),
            f"Each layer's attention to [SEP], and to any sink token ([CLS], [SEP], "
            f"{' '.join(settings.punctuation)}), its heads' mean with 95% intervals over the "
            f"examples, against one half: Clark et al. find over half going to [SEP] in the "
            f"middle layers (6-10 of 12; shaded: this model's) ({where}).",
            setup | {"bootstrap_resamples": settings.bootstrap_resamples},
        )
    return drawn
