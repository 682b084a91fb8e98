"""patterns_train: fit the attention-pattern CNN on the labelled maps (paper Sec. 4.1).

Labelled set (`patterns.labels`): `annotations` reads data/annotations/<model.name>/
heuristic.csv and human.csv, checks every row against the attention stores and lets human
labels win; `heuristic` labels a fresh sample of the dumps by the rule instead. Writes
outputs/patterns/labels.csv (the labelled set used, with each label's source; layers and
heads from 1), outputs/patterns/cnn.pt (the model), outputs/metrics/patterns_train.json
(macro-F1, per-class F1, accuracy on the seeded validation split; label counts) and the
confusion matrix table outputs/plots/patterns_train/confusion.csv (one row per validation
map: its row in labels.csv counted from 0, actual, predicted).
"""

from __future__ import annotations

import logging

import torch

from pipeline.core.io import write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.cnn import save_classifier
from pipeline.kovaleva.patterns.fit import train_classifier
from pipeline.kovaleva.patterns.labels import write_labels
from pipeline.kovaleva.patterns.maps import open_stores
from pipeline.kovaleva.patterns.settings import PatternSettings

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = PatternSettings.from_config(stage.cfg.patterns, stage.cfg.seed)
    torch.set_num_threads(settings.threads)
    stores = open_stores(stage.upstream("attention"), stage.task_names, stage.cfg.model.name)
    annotations = stage.data("annotations", stage.cfg.model.name)
    trained = train_classifier(stores, settings, annotations)

    classifier = settings.classifier
    write_labels(stage.out("patterns", "labels.csv"), trained.labels)
    save_classifier(
        stage.out("patterns", "cnn.pt"), trained.model, classifier.channels, classifier.input_size
    )
    write_json(stage.out("metrics", "patterns_train.json"), trained.metrics)
    write_table(stage.out("plots", "patterns_train", "confusion.csv"), trained.confusion)
    log.info(
        "pattern CNN: macro-F1 %.3f on %d validation maps",
        trained.metrics["macro_f1"],
        len(trained.confusion),
    )


if __name__ == "__main__":
    stage_main(run)
