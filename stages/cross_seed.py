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
statistics are pipeline.extensions.cross_seed.
"""

from __future__ import annotations

from pipeline.core.stage import StageRun, stage_main
from pipeline.extensions.cross_seed import combined, compare_seeds, read_seed_runs, summary_text
from pipeline.extensions.cross_seed_figures import cross_seed_figures


def run(stage: StageRun) -> None:
    runs = [
        read_seed_runs(stage.upstream(reader="cross_seed"), task, list(stage.cfg.seeds))
        for task in stage.tasks
    ]
    compared = [compare_seeds(r) for r in runs]
    tables, metrics = combined(compared)
    stage.write_outputs(
        "cross_seed",
        tables=tables,
        figures=cross_seed_figures(runs, tables["metric"]),
        metrics=metrics,
        config={"model": stage.cfg.model.name},
        texts={"summary.txt": summary_text(compared)},
    )


if __name__ == "__main__":
    stage_main(run)
