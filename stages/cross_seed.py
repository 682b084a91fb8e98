"""cross_seed: how much fine-tuning results move with the seed, for every task.

Reads, for every task and every seed of `seeds`, outputs/metrics/finetune/<task>/seed<seed>.json
and the ablate tables outputs/plots/ablate/<task>/seed<seed>/{heads,importance}.csv. Writes
under outputs/plots/cross_seed/ metric.csv (the main metric per task and seed),
ablation_spearman.csv and importance_spearman.csv (Spearman correlation of the per-head
ablation effects, of the gradient importances, for each pair of seeds), significant.csv (the
heads significant in every seed) and summary.txt; the figures
outputs/figures/cross_seed/metric_by_seed.png and, from two seeds on, head_effects.png; and
outputs/metrics/cross_seed.json (`<task>.seeds`, `.metric_mean`, `.metric_sd`,
`.ablation_spearman`, `.importance_spearman`, `.heads_significant_every_seed`). The
statistics are pipeline.michel.seeds.
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.config import load_task
from pipeline.core.io import save_figure, write_json, write_table, write_text
from pipeline.core.stage import StageRun, stage_main
from pipeline.michel.seeds import compare_seeds, read_seed_runs, summary_text
from pipeline.michel.seeds_figures import head_effects_scatter, metric_by_seed


def run(stage: StageRun) -> None:
    seeds = list(stage.cfg.seeds)
    tasks = [load_task(task) for task in stage.task_names]
    runs = [read_seed_runs(stage.upstream(), task, seeds) for task in tasks]
    compared = [compare_seeds(r) for r in runs]

    plots = stage.out("plots", "cross_seed")
    for name in compared[0].tables:
        write_table(plots / f"{name}.csv", pd.concat([c.tables[name] for c in compared]))
    write_text(plots / "summary.txt", summary_text(compared))
    figures = {"metric_by_seed": metric_by_seed(pd.concat([c.tables["metric"] for c in compared]))}
    if len(seeds) > 1:
        figures["head_effects"] = head_effects_scatter({r.task.name: r.heads for r in runs})
    for name, drawn in figures.items():
        path = stage.out("figures", "cross_seed", f"{name}.png")
        save_figure(
            path, drawn.figure, drawn.caption, {"model": stage.cfg.model.name, **drawn.config}
        )
    write_json(
        stage.out("metrics", "cross_seed.json"),
        {k: v for c in compared for k, v in c.metrics.items()},
    )


if __name__ == "__main__":
    stage_main(run)
