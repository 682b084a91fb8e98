"""analyze: Kovaleva et al. Figs. 5, 6, 7 and 10 for one task, from its attention store.

Runs once per (task, seed) of `tasks` x `seeds`. Reads outputs/attention/<task>/seed<seed>.parquet
(pre-trained and fine-tuned maps of the same dev examples) and writes, under
outputs/plots/analyze/<task>/seed<seed>/ and outputs/figures/analyze/<task>/seed<seed>/:
- cosine.csv, fig5_cosine.png: per-head cosine similarity, pre-trained vs fine-tuned;
- cosine_layers.csv, fig5_cosine_layers.png: the same per layer, with 95% intervals;
- token_types.csv, fig6_token_types_<variant>.png: attention received by each token type;
- token_type_layers.csv, fig6_token_type_layers.png: the same per layer, with 95% intervals;
- cls_last_layer.csv, fig7_cls_last_layer.png: the last layer's [CLS] row per token type;
- grid_example.csv, fig10_grid.png: every head's map of one example;
and the headline numbers to outputs/metrics/analyze/<task>/seed<seed>.json. Every table gives each
mean over examples with its 95% bootstrap interval over examples (`_ci_low`, `_ci_high`).
Layers and heads are numbered from 1 in every output. The analysis is pipeline.kovaleva.analyze.
"""

from __future__ import annotations

from pipeline.attention.store import AttentionStore, store_path
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.analyze import analyze_task
from pipeline.kovaleva.figures import analysis_figures


def run(stage: StageRun) -> None:
    cfg, task = stage.cfg, stage.cfg.task.name
    source = store_path(stage.upstream("attention"), task, stage.seed)
    store = AttentionStore(source, expect_model=cfg.model.name)
    result = analyze_task(store, task, stage.settings("analyze"), seed=cfg.seed)
    stage.write_outputs(
        "analyze",
        task,
        stage.seed_folder,
        tables=result.tables,
        figures=analysis_figures(result),
        metrics=result.metrics,
        config={
            "task": task,
            "seed": stage.seed,
            "model": cfg.model.name,
            "examples": len(result.examples),
            "store": str(source),
        },
    )


if __name__ == "__main__":
    stage_main(run)
