"""clark_heads: where the heads of one task's attention store attend (Clark et al. 2019).

From outputs/attention/<task>.parquet (variant `clark.heads.variant`, pre-trained by
default) it writes, under outputs/plots/clark_heads/<task>/ (tables) and
outputs/figures/clark_heads/<task>/ (figures):
- targets.csv / targets.png: each head's average attention to [CLS], [SEP], "." and ",",
  itself, the previous and the next token, [SEP]->[SEP] and other->[SEP] (Sec. 3);
- entropy.csv / entropy.png: each head's attention entropy, its [CLS]-row entropy and the
  uniform baseline (Sec. 3.3);
- clusters.csv / clusters.png: the 2-D MDS embedding of the heads' Jensen-Shannon distances,
  with behaviour labels (Sec. 6); the distances themselves in distances.csv;
and the headline numbers in outputs/metrics/clark_heads/<task>.json.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.attention.store import AttentionStore
from pipeline.clark import figures
from pipeline.clark.attend import TargetAttention
from pipeline.clark.clustering import behaviours, embed, js_divergence_sum
from pipeline.clark.entropy import HeadEntropy
from pipeline.core.heads import head_name
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main

log = logging.getLogger(__name__)


def headline(targets: pd.DataFrame, entropy: pd.DataFrame) -> dict[str, float]:
    """Flat metrics: the peak layer-mean attention to each target, and entropy summaries."""
    layer_means = targets.groupby(["target", "layer"])["attention"].mean()
    metrics: dict[str, float] = {}
    for target in ("cls", "sep", "punct", "previous", "next"):
        metrics[f"{target}_peak_layer_attention"] = float(layer_means[target].max())
        metrics[f"{target}_peak_layer"] = int(layer_means[target].idxmax())
    metrics["entropy_mean"] = float(entropy["entropy"].mean())
    metrics["uniform_entropy"] = float(entropy["uniform"].iloc[0])
    metrics["cls_entropy_last_layer"] = float(
        entropy.loc[entropy["layer"] == entropy["layer"].max(), "cls_entropy"].mean()
    )
    return metrics


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.clark_heads
    task = cfg.task.name
    store = AttentionStore(
        stage.upstream("attention", f"{task}.parquet"), expect_model=cfg.model.name
    )
    num_layers, num_heads = store.shape
    examples = store.example_ids(settings.variant, task)[: settings.num_examples]
    tokens = store.all_tokens(task)

    targets = TargetAttention(num_layers, num_heads, settings.punctuation)
    entropy = HeadEntropy(num_layers, num_heads)
    distances = np.zeros((num_layers * num_heads,) * 2)  # [K, K], K = L * H heads
    maps_iter = store.iter_maps(settings.variant, task, examples=examples)
    for example_id, maps in tqdm(maps_iter, total=len(examples), desc=f"clark heads {task}"):
        info = tokens[example_id]
        targets.add(maps, info.tokens, info.word_ids)  # maps [L, H, n, n]
        entropy.add(maps)
        distances += js_divergence_sum(maps.reshape(-1, *maps.shape[-2:]))

    target_table, entropy_table = targets.table(), entropy.table()
    points = embed(distances, seed=cfg.seed)  # [K, 2], heads in (layer, head) order
    labels = behaviours(target_table, entropy_table, **settings.behaviour)
    clusters = labels.assign(x=points[:, 0], y=points[:, 1])
    names = [head_name(layer, head) for layer in range(num_layers) for head in range(num_heads)]

    plots, pictures = (
        stage.out("plots", "clark_heads", task),
        stage.out("figures", "clark_heads", task),
    )
    write_table(plots / "targets.csv", target_table)
    write_table(plots / "entropy.csv", entropy_table)
    write_table(plots / "clusters.csv", clusters)
    write_table(
        plots / "distances.csv",
        pd.DataFrame(distances, index=names, columns=names).reset_index(names="head"),
    )
    where = f"{task}, {settings.variant} {cfg.model.name}, {len(examples)} dev examples"
    save_figure(
        pictures / "targets.png",
        figures.targets_per_layer(target_table),
        f"Average attention of each head (dots) and layer mean (line) to each token type "
        f"({where}).",
        {"variant": settings.variant, "examples": len(examples)},
    )
    save_figure(
        pictures / "entropy.png",
        figures.entropy_per_layer(entropy_table),
        f"Attention entropy per head, over all tokens and from [CLS], against uniform "
        f"attention ({where}).",
        {"variant": settings.variant, "examples": len(examples)},
    )
    save_figure(
        pictures / "clusters.png",
        figures.head_clusters(clusters),
        f"Heads placed by MDS of their summed Jensen-Shannon divergences ({where}).",
        {"variant": settings.variant, "examples": len(examples), **settings.behaviour},
    )
    metrics = headline(target_table, entropy_table) | {"examples": len(examples)}
    write_json(stage.out("metrics", "clark_heads", f"{task}.json"), metrics)
    log.info("clark_heads %s: %s", task, metrics)


if __name__ == "__main__":
    stage_main(run)
