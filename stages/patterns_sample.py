"""patterns_sample: draw the maps to annotate and label them by the heuristic (not a DVC stage).

`python -m stages.patterns_sample --dvc` writes data/annotations/<model.name>/heuristic.csv:
`patterns.sample.maps_per_task` random (dev example, layer, head) maps per task of the
`patterns.sample.variant` model (fine-tuned, as the paper sampled them), drawn with `seed`
from outputs/attention/<task>.parquet, each with its features and heuristic label (source
`heuristic`); layers and heads count from 1. That file is the shipped labelled set and the
annotation page's queue; run it again only after the dumps change, since human labels refer
to its maps.
"""

from __future__ import annotations

import logging

from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.labels import HEURISTIC_FILE, write_labels
from pipeline.kovaleva.patterns.maps import open_stores
from pipeline.kovaleva.patterns.sample import sample_labels
from pipeline.kovaleva.patterns.settings import PatternSettings

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = PatternSettings.from_config(stage.cfg.patterns, stage.cfg.seed)
    stores = open_stores(stage.upstream("attention"), stage.task_names, stage.cfg.model.name)
    labels = sample_labels(stores, settings.sample, settings.thresholds, settings.seed)
    path = stage.data_out / "annotations" / stage.cfg.model.name / HEURISTIC_FILE
    write_labels(path, labels)
    log.info(
        "%d maps -> %s; classes: %s", len(labels), path, labels["label"].value_counts().to_dict()
    )


if __name__ == "__main__":
    stage_main(run)
