"""model_identity: a record of the model the stages load, so that new weights under the same
`model.name_or_path` rerun them (pipeline/core/model_files.py).

Writes outputs/model/identity.json: the model's name, its `name_or_path` and `tokenizer` as
configured, and the SHA-256 of its local files (null for a hub id, whose revision is the
user's to pin, and for a random model built from its config). DVC runs it on every `dvc repro`
(it is always changed) and reruns a stage that loads the model only when the record changed.
"""

from __future__ import annotations

from pipeline.core.io import write_json
from pipeline.core.layout import model_identity
from pipeline.core.model_files import files_digest
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    model = stage.cfg.model
    record = {
        "name": model.name,
        "name_or_path": model.name_or_path,
        "tokenizer": model.tokenizer,
        "files_sha256": files_digest(model),
    }
    write_json(model_identity(stage.out_root), record)


if __name__ == "__main__":
    stage_main(run)
