"""patterns_train: fit the attention-pattern CNN on the labelled maps (paper Sec. 4.1).

Labelled set (`patterns.labels`): `annotations` reads data/annotations/<model.name>/
heuristic.csv and human.csv, checks every row against the attention stores and lets human
labels win; `heuristic` labels a fresh sample of the dumps by the rule instead. Writes
outputs/patterns/labels.csv (the labelled set used, with each label's source),
outputs/patterns/cnn.pt (the model), outputs/metrics/patterns_train.json (macro-F1, per-class
F1, accuracy on the seeded validation split; label counts) and the confusion matrix table
outputs/plots/patterns_train/confusion.csv (one row per validation map: actual, predicted).
"""

from __future__ import annotations

import logging

import pandas as pd
import torch

from pipeline.attention.store import AttentionStore
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import save_classifier
from pipeline.kovaleva.patterns.fit import ClassifierSettings, fit_and_evaluate
from pipeline.kovaleva.patterns.labels import check_in_store, map_ids, merge_labels, read_labels
from pipeline.kovaleva.patterns.maps import load_maps, open_stores
from pipeline.kovaleva.patterns.sample import sample_labels_from_config

log = logging.getLogger(__name__)


def annotated_labels(stage: StageRun, stores: dict[str, AttentionStore]) -> pd.DataFrame:
    """The shipped heuristic labels overridden by human ones, checked against the stores."""
    folder = stage.data("annotations", stage.cfg.model.name)
    frames = []
    for name in ("heuristic.csv", "human.csv"):
        path = folder / name
        if name == "human.csv" and not path.exists():
            continue
        frame = read_labels(path)
        frame = frame[frame["task"].isin(stores)]  # tasks outside this run are not used
        check_in_store(frame, path, stores)
        frames.append(frame)
    labels = merge_labels(frames[0], frames[1] if len(frames) > 1 else None)
    if labels.empty:
        raise PipelineError(
            f"{folder} has no labelled maps of the tasks {sorted(stores)}; sample them with "
            "`python -m stages.patterns_sample --dvc` or set patterns.labels=heuristic"
        )
    return labels


def run(stage: StageRun) -> None:
    settings = stage.cfg.patterns
    torch.set_num_threads(settings.classifier.threads)
    stores = open_stores(stage.upstream("attention"), stage.task_names, stage.cfg.model.name)
    if settings.labels not in ("annotations", "heuristic"):
        raise PipelineError(
            f"unknown patterns.labels '{settings.labels}'; use annotations or heuristic"
        )
    if settings.labels == "annotations":
        labels = annotated_labels(stage, stores)
    else:
        labels = sample_labels_from_config(stores, settings, stage.cfg.seed)
    maps = load_maps(stores, map_ids(labels))
    classifier = ClassifierSettings.from_config(settings.classifier, stage.cfg.seed)
    model, metrics, confusion = fit_and_evaluate(maps, labels["label"].tolist(), classifier)

    counts = labels["label"].value_counts()
    metrics.update({f"count_{c}": int(counts.get(c, 0)) for c in CLASSES})
    metrics.update(
        num_labels=len(labels),
        num_human=int((labels["source"] == "human").sum()),
        val_fraction=classifier.val_fraction,
    )
    write_table(stage.out("patterns", "labels.csv"), labels)
    save_classifier(
        stage.out("patterns", "cnn.pt"), model, classifier.channels, classifier.input_size
    )
    write_json(stage.out("metrics", "patterns_train.json"), metrics)
    write_table(stage.out("plots", "patterns_train", "confusion.csv"), confusion)
    log.info(
        "pattern CNN: macro-F1 %.3f on %d validation maps", metrics["macro_f1"], len(confusion)
    )


if __name__ == "__main__":
    stage_main(run)
