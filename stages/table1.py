"""table1: Kovaleva et al. Table 1, dev scores per task and training regime, with intervals.

Runs once per fine-tuning seed of `seeds`. Reads the finetune stage's per-example dev
predictions of that seed, outputs/plots/finetune/<task>/seed<seed>/predictions.csv, for every
task and writes, under outputs/plots/table1/seed<seed>/, table1.csv (each task's main metric:
the regimes' scores, the best constant prediction's (`chance`) and the paired differences
finetuned - random_init, random_init - pretrained, finetuned - pretrained and finetuned -
chance, with 95% bootstrap intervals over the dev rows) and table1_all_metrics.csv (the
same for every metric of each task), outputs/figures/table1/seed<seed>/table1.png and
outputs/metrics/table1/seed<seed>.json (flat keys `<task>.<regime>`, `<task>.<difference>`,
each with `_ci_low`/`_ci_high`).
"""

from __future__ import annotations

from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.figures import table1_figures
from pipeline.kovaleva.table1 import (
    DIFFERENCES,
    SCORED,
    main_rows,
    read_predictions,
    table1,
    table1_metrics,
)


def run(stage: StageRun) -> None:
    cfg, seed = stage.cfg, stage.seed_folder
    tasks = stage.tasks
    predictions = {
        task.name: read_predictions(
            stage.results_of("plots", "finetune", task.name, seed) / "predictions.csv",
            task.name,
        )
        for task in tasks
    }
    settings = stage.settings("table1")
    table = table1(tasks, predictions, settings, cfg.seed)
    stage.write_outputs(
        "table1",
        seed,
        tables={"table1": main_rows(table), "table1_all_metrics": table},
        figures=table1_figures(main_rows(table), SCORED, list(DIFFERENCES)),
        metrics=table1_metrics(table),
        config={
            "model": cfg.model.name,
            "seed": stage.seed,
            "bootstrap_resamples": settings.bootstrap_resamples,
        },
    )


if __name__ == "__main__":
    stage_main(run)
