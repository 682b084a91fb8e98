"""patterns_sample: draw a round of maps to label by eye (not a DVC stage).

`python -m tools.patterns_sample --dvc` draws `patterns.sample.per_class` maps of each rule
class in `patterns.sample.classes` from the dumps outputs/attention/<task>/seed<seed>.parquet
of the `patterns.sample.variants` models (the primary `seed`, which also seeds the draw; maps
sampled before are never drawn again;
the rule, with the thresholds of `patterns.heuristic`, only chooses which maps to look at)
and appends them to data/annotations/<model.name>/: sample.csv (where each map comes from,
layers and heads from 1, the rule's class) and maps.npz (the maps and their word pieces).
With `patterns.sample.boundaries` (type pairs such as `vertical|vertical+diagonal`), the round
instead draws `per_class` maps per boundary where the trained classifier
(outputs/patterns/cnn.pt) is least sure between the two types (see
pipeline/kovaleva/patterns/sample.py); the classifier chooses which maps to look at, never a
label.
It renders them on sheets of six, outputs/labelling/<model.name>/<first new id>/sheet_<i>.png,
each map with its id and word pieces and no label: look at them and add rows to visual.csv,
or label them on the annotation page (python -m tools.annotate --annotator NAME).
"""

from __future__ import annotations

import logging

import pandas as pd
import torch

from pipeline.core import layout
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.labels import MAPS_FILE, SAMPLE_COLUMNS, SAMPLE_FILE, read_sample
from pipeline.kovaleva.patterns.maps import open_stores
from pipeline.kovaleva.patterns.mapsets import read_map_set, write_map_set
from pipeline.kovaleva.patterns.sample import next_round
from pipeline.kovaleva.patterns.sheets import render_sheets

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = stage.settings("patterns")
    torch.set_num_threads(settings.classifier.threads)  # a boundary round runs the tiny CNN
    s = settings.sample
    folder = stage.data("annotations", stage.cfg.model.name)
    first_round = not (folder / SAMPLE_FILE).exists()
    before = (
        pd.DataFrame(columns=SAMPLE_COLUMNS) if first_round else read_sample(folder / SAMPLE_FILE)
    )
    maps = {} if first_round else read_map_set(folder / MAPS_FILE)
    tasks = list(stage.cfg.tasks)  # every dumped task, in a Hydra job too
    stores = open_stores(stage.upstream("attention"), tasks, stage.cfg.model.name, stage.seed)
    classifier = layout.pattern_classifier(stage.cfg.paths.outputs)  # used near boundaries
    rows, new_maps = next_round(stores, settings, classifier, stage.cfg.seed, before)
    if rows.empty:
        raise PipelineError(
            f"no unsampled maps of the strata {', '.join(s.boundaries or s.classes)} in the "
            f"dumps of {tasks}; choose others (patterns.sample, patterns.heuristic)"
        )
    write_map_set(folder / MAPS_FILE, {**maps, **new_maps})
    write_table(folder / SAMPLE_FILE, pd.concat([before, rows], ignore_index=True))
    first_id = rows["map_id"].iloc[0]
    sheets = render_sheets(new_maps, stage.out("labelling", stage.cfg.model.name, first_id))
    log.info(
        "%d new maps (%s) -> %s; %d sheets in %s",
        len(rows),
        rows["stratum"].value_counts().to_dict(),
        folder,
        len(sheets),
        sheets[0].parent,
    )


if __name__ == "__main__":
    stage_main(run)
