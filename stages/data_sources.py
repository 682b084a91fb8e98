"""data_sources: check the offline data sets and write a digest of the files each reader
reads, so that editing a data file, or pointing `DARK_SECRETS_DATA` at other data, reruns
its readers (pipeline/data/sources.py).

Writes data/sources/<set>.json for each of glue, ud, gap and framenet: every file's path
within its folder, size and SHA-256. DVC runs it before every `dvc repro` (it is always
changed) and reruns a reader only when its digest changed. A missing data set fails here in
one line, before DVC removes any reader's outputs.
"""

from __future__ import annotations

from pipeline.core.io import write_json
from pipeline.core.layout import data_digest
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.sources import every_source


def run(stage: StageRun) -> None:
    found = every_source(
        stage.cfg.paths.shared_data,
        stage.cfg.paths.glue_dir,
        stage.settings("prepare"),
        list(stage.cfg.tasks),
        stage.settings("clark_syntax"),
        stage.settings("clark_coref"),
        stage.settings("framenet"),
    )
    digests = {name: source.digest() for name, source in found.items()}  # check all first
    for name, digest in digests.items():
        write_json(data_digest(stage.inputs_out("data_sources"), name), digest)


if __name__ == "__main__":
    stage_main(run)
