"""patterns_sample: draw the maps to annotate and label them by the heuristic (not a DVC stage).

`python -m stages.patterns_sample --dvc` writes data/annotations/<model.name>/heuristic.csv:
`patterns.sample.maps_per_task` random (dev example, layer, head) maps per task of the
`patterns.sample.variant` model (fine-tuned, as the paper sampled them), drawn with `seed`
from outputs/attention/<task>.parquet, each with its features and heuristic label (source
`heuristic`). That file is the shipped labelled set and the annotation page's queue; run it
again only after the dumps change, since human labels refer to its maps.
"""

from __future__ import annotations

import logging

from pipeline.core.io import write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.maps import open_stores
from pipeline.kovaleva.patterns.sample import sample_labels_from_config

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = stage.cfg.patterns
    stores = open_stores(stage.upstream("attention"), stage.task_names, stage.cfg.model.name)
    labels = sample_labels_from_config(stores, settings, stage.cfg.seed)
    path = stage.data_out / "annotations" / stage.cfg.model.name / "heuristic.csv"
    write_table(path, labels)
    log.info(
        "%d maps -> %s; classes: %s", len(labels), path, labels["label"].value_counts().to_dict()
    )


if __name__ == "__main__":
    stage_main(run)
