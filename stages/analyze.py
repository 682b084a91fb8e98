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
Layers and heads are numbered from 1 in every output. The analysis is pipeline.kovaleva.analysis.
"""

from __future__ import annotations

from pipeline.attention.store import AttentionStore, store_path
from pipeline.core.config import TaskSpec
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.analysis import AnalyzeSettings, analyze_task
from pipeline.kovaleva.figures import analysis_figures


def run(stage: StageRun) -> None:
    cfg = stage.cfg
    task = TaskSpec.from_config(cfg.task).name
    source = store_path(stage.upstream("attention"), task, stage.seed)
    store = AttentionStore(source, expect_model=cfg.model.name)
    settings = AnalyzeSettings.from_config(cfg.analyze)
    result = analyze_task(store, task, settings, seed=cfg.seed)

    plots = stage.out("plots", "analyze", task, stage.seed_folder)
    for name, table in result.tables.items():
        write_table(plots / f"{name}.csv", table)
    figures = stage.out("figures", "analyze", task, stage.seed_folder)
    config = {
        "task": task,
        "seed": stage.seed,
        "model": cfg.model.name,
        "examples": len(result.examples),
        "store": str(source),
    }
    for name, drawn in analysis_figures(result, config).items():
        save_figure(figures / f"{name}.png", drawn.figure, drawn.caption, drawn.config)
    write_json(stage.out("metrics", "analyze", task, f"{stage.seed_folder}.json"), result.metrics)


if __name__ == "__main__":
    stage_main(run)
