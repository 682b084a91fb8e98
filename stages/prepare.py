"""prepare: write each selected GLUE task's labelled splits as Parquet under data/glue/."""

from __future__ import annotations

import logging

from pipeline.core.config import glue_dir, load_task
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_hub_split, read_local_split, split_names, subsample

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    cfg = stage.cfg
    settings = cfg.prepare
    if settings.source not in ("local", "hub"):
        raise PipelineError(f"unknown prepare.source '{settings.source}'; use local or hub")
    counts: dict[str, int] = {}
    for name in stage.task_names:
        task = load_task(name)
        for split in split_names(task):
            skipped = 0
            if settings.source == "local":
                frame, skipped = read_local_split(glue_dir(cfg), task, split)
            else:
                frame = read_hub_split(task, split)
            limit = settings.max_train_rows if split == "train" else settings.max_eval_rows
            kept = subsample(frame, limit, cfg.seed)
            write_table(stage.data_out / "glue" / name / f"{split}.parquet", kept)
            counts[f"{name}.{split}.rows"] = len(kept)
            counts[f"{name}.{split}.source_rows"] = len(frame)
            if skipped:
                counts[f"{name}.{split}.malformed_skipped"] = skipped
            log.info("%s/%s: %d of %d rows", name, split, len(kept), len(frame))
    write_json(stage.out("metrics", "prepare.json"), counts)


if __name__ == "__main__":
    stage_main(run)
