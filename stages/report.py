"""report: one offline HTML page with every figure, table and metric of the pipeline."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from pipeline.core import layout
from pipeline.core.config import group_options
from pipeline.core.io import write_text
from pipeline.core.stage import StageRun, stage_main
from pipeline.report.committed import drift_notice
from pipeline.report.html import Run, render_report


def run(stage: StageRun) -> None:
    outputs = Path(stage.cfg.paths.outputs)  # reads every stage's DVC-tracked outputs
    tasks, seeds = frozenset(stage.cfg.tasks), frozenset(stage.cfg.seeds)
    all_tasks, model = frozenset(group_options("task")), str(stage.cfg.model.name)
    run = Run(tasks, seeds, all_tasks, model)  # this run's results only
    notice = drift_notice(outputs)  # against git's HEAD, which is no DVC dependency
    page = render_report(outputs, stage.cfg.report.title, OmegaConf.to_yaml(stage.cfg), run, notice)
    write_text(layout.report_page(stage.out_root), page)


if __name__ == "__main__":
    stage_main(run)
