"""prepare: write each selected GLUE task's labelled splits as Parquet under data/glue/.

Writes data/glue/<task>/<split>.parquet and outputs/metrics/prepare.json (rows kept and
read per split, `<task>.<split>.rows` and so on; pipeline/data/glue.py).
"""

from __future__ import annotations

from pipeline.core.io import write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data import sources
from pipeline.data.glue import prepare_task


def run(stage: StageRun) -> None:
    settings, paths, counts = stage.settings("prepare"), stage.cfg.paths, {}
    glue = sources.glue(paths.shared_data, paths.glue_dir, settings, stage.task_names)
    glue.check()
    data = stage.inputs_out("prepare")
    for task in stage.tasks:
        prepared = prepare_task(task, settings, glue.folder, stage.cfg.seed)
        for split, kept in prepared.items():
            write_table(data / "glue" / task.name / f"{split}.parquet", kept.frame)
            counts.update(kept.counts(f"{task.name}.{split}"))
    stage.write_outputs("prepare", metrics=counts)


if __name__ == "__main__":
    stage_main(run)
