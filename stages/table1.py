"""table1: Kovaleva et al. Table 1, dev scores per task and training regime.

Reads outputs/metrics/finetune/<task>.json for every task and writes
outputs/plots/table1/table1.csv, outputs/figures/table1/table1.png and
outputs/metrics/table1.json (flat keys `<task>.<regime>`).
"""

from __future__ import annotations

import json

from pipeline.core.config import load_task
from pipeline.core.errors import PipelineError
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.figures import table1_figures
from pipeline.kovaleva.table1 import table1, table1_metrics


def run(stage: StageRun) -> None:
    metrics = {}
    for task in stage.task_names:
        path = stage.upstream("metrics", "finetune", f"{task}.json")
        if not path.exists():
            raise PipelineError(f"{path} not found; run the finetune stage for {task} first")
        metrics[task] = json.loads(path.read_text())
    main = {task: load_task(task).main_metric for task in stage.task_names}
    table = table1(metrics, main)
    write_table(stage.out("plots", "table1", "table1.csv"), table)
    config = {"model": stage.cfg.model.name, "tasks": list(stage.task_names), "metrics": main}
    for name, drawn in table1_figures(table, config).items():
        path = stage.out("figures", "table1", f"{name}.png")
        save_figure(path, drawn.figure, drawn.caption, drawn.config)
    write_json(stage.out("metrics", "table1.json"), table1_metrics(table))


if __name__ == "__main__":
    stage_main(run)
