"""clark_heads: where the heads of one task's attention store attend (Clark et al. 2019).

Runs once per (task, seed) of `tasks` x `seeds`. From outputs/attention/<task>/seed<seed>.parquet
(variant `clark_heads.variant`, pre-trained by default) it writes, under
outputs/plots/clark_heads/<task>/seed<seed>/ (tables) and
outputs/figures/clark_heads/<task>/seed<seed>/ (figures):
- targets.csv / targets.png: each head's average attention to [CLS], [SEP], "." and ",",
  itself, the previous and the next token, [SEP]->[SEP] and other->[SEP] (Sec. 3);
- entropy.csv / entropy.png: each head's attention entropy, its [CLS]-row entropy and the
  uniform baseline (Sec. 3.3);
- clusters.csv / clusters.png: the 2-D MDS embedding of the heads' Jensen-Shannon distances,
  with behaviour labels (Sec. 6); the distances themselves in distances.csv;
and the headline numbers in outputs/metrics/clark_heads/<task>/seed<seed>.json. Layers and heads are
numbered from 1 in every output. `clark_heads.measure` reads the maps as weights (default),
value-weighted norms or rollout (pipeline/attention/measured.py). The analysis is
pipeline.clark.heads_report.
"""

from __future__ import annotations

from pipeline.attention.store import AttentionStore, store_path
from pipeline.clark import figures
from pipeline.clark.heads_report import analyse_heads
from pipeline.core.heads import numbered_from_one
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.clark_heads
    task = cfg.task.name
    store = AttentionStore(
        store_path(stage.upstream("attention"), task, stage.seed), expect_model=cfg.model.name
    )
    report = analyse_heads(store, task, cfg.seed, **settings)
    plots = stage.out("plots", "clark_heads", task, stage.seed_folder)
    write_table(plots / "targets.csv", numbered_from_one(report.targets))
    write_table(plots / "entropy.csv", numbered_from_one(report.entropy))
    write_table(plots / "clusters.csv", numbered_from_one(report.clusters))
    write_table(plots / "distances.csv", report.distances)

    pictures = stage.out("figures", "clark_heads", task, stage.seed_folder)
    where = f"{task}, {settings.variant} {cfg.model.name}, {report.examples} dev examples"
    setup = {"variant": settings.variant, "examples": report.examples, "seed": stage.seed}
    save_figure(
        pictures / "targets.png",
        figures.targets_per_layer(report.targets),
        f"Average attention of each head (dots) and layer mean (line) to each token type "
        f"({where}).",
        setup,
    )
    save_figure(
        pictures / "entropy.png",
        figures.entropy_per_layer(report.entropy),
        f"Attention entropy per head, over all tokens and from [CLS], against uniform "
        f"attention ({where}).",
        setup,
    )
    save_figure(
        pictures / "clusters.png",
        figures.head_clusters(report.clusters),
        f"Heads placed by MDS of their summed Jensen-Shannon divergences ({where}).",
        setup | dict(settings.behaviour),
    )
    write_json(
        stage.out("metrics", "clark_heads", task, f"{stage.seed_folder}.json"), report.metrics
    )


if __name__ == "__main__":
    stage_main(run)
