"""prepare: write each selected GLUE task's labelled splits as Parquet under data/glue/.

Writes data/glue/<task>/<split>.parquet and outputs/metrics/prepare.json (rows kept and
read per split, `<task>.<split>.rows` and so on; pipeline/data/glue.py).
"""

from __future__ import annotations

from pipeline.core.config import glue_dir, load_task
from pipeline.core.io import write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import PrepareSettings, prepare_task


def run(stage: StageRun) -> None:
    settings = PrepareSettings.from_config(stage.cfg.prepare, stage.cfg.seed)
    counts: dict[str, int] = {}
    for name in stage.task_names:
        for split, prepared in prepare_task(load_task(name), settings, glue_dir(stage.cfg)).items():
            write_table(stage.data_out / "glue" / name / f"{split}.parquet", prepared.frame)
            counts.update(prepared.counts(f"{name}.{split}"))
    write_json(stage.out("metrics", "prepare.json"), counts)


if __name__ == "__main__":
    stage_main(run)
