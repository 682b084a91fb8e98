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
- sep_by_layer.png: each layer's attention to [SEP] with its interval (Sec. 3, Fig. 2);
and the headline numbers in outputs/metrics/clark_heads/<task>/seed<seed>.json. Layers and heads are
numbered from 1 in every output. `clark_heads.measure` reads the maps as weights (default),
value-weighted norms or rollout (pipeline/attention/measures.py). The analysis is
pipeline.clark.heads.
"""

from __future__ import annotations

from pipeline.attention.store import AttentionStore, store_path
from pipeline.clark.heads import analyse_heads, heads_figures
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    cfg, task, settings = stage.cfg, stage.cfg.task.name, stage.settings("clark_heads")
    store = AttentionStore(
        store_path(stage.upstream("attention"), task, stage.seed), expect_model=cfg.model.name
    )
    report = analyse_heads(store, task, cfg.seed, settings)
    stage.write_outputs(
        "clark_heads",
        task,
        stage.seed_folder,
        tables=report.tables,
        figures=heads_figures(report, task, cfg.model.name, settings),
        metrics=report.metrics,
        config={"seed": stage.seed},
    )


if __name__ == "__main__":
    stage_main(run)
