"""patterns_train: the attention-pattern CNN trained on maps labelled by eye (paper Sec. 4.1).

Reads the label folders data/annotations/<name>/ of every name in `patterns.labels_from`
(maps.npz, sample.csv and the visual and human labels; one resolved label per map, see
pipeline/kovaleva/patterns/labels.py). Cross-validates the CNN with folds grouped by input
example, scores it and the threshold rule against the visual labels with bootstrap
intervals, then trains the final ensemble (and a second one with the next seeds, for the
seed-stability check of patterns_apply). Writes outputs/patterns/cnn.pt,
outputs/patterns/labels.csv (one resolved label per map), outputs/metrics/patterns_train.json
(label counts, the annotators' agreement per folder, every score `<cnn|rule>.<score>` with
`_ci_low`/`_ci_high` on all maps, `<cnn|rule>.<folder>.<score>` on each folder's, and
`cnn_unseen.<folder>.<score>` on every other label folder under data/annotations/, whose maps
the classifier never learnt from); under
outputs/plots/patterns_train/: scores.csv, agreement.csv (annotator pairs per folder),
cross_validation.csv (every labelled map's input example, visual, out-of-fold CNN and rule label),
recall_by_round.csv (each class's recall per folder and labelling round), confusion.csv and
summary.txt (the report's statement of what the classifier rests on); and
Fig. 1 (a typical map of each type on which the visual label and the classifier agree)
under outputs/figures/patterns_train/.
"""

from __future__ import annotations

import logging

import torch

from pipeline.core import layout
from pipeline.core.io import write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.cnn import save_classifier
from pipeline.kovaleva.patterns.examples import pick_examples
from pipeline.kovaleva.patterns.figures import pattern_examples_figure
from pipeline.kovaleva.patterns.labels import label_folders
from pipeline.kovaleva.patterns.train import train_classifier, training_summary

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.settings("patterns")
    classifier = settings.classifier
    torch.set_num_threads(classifier.threads)
    folders = [stage.data("annotations", name) for name in settings.labels_from]
    unseen = [
        f for f in label_folders(stage.data("annotations")) if f.name not in settings.labels_from
    ]
    trained = train_classifier(folders, classifier, settings.heuristic, cfg.seed, unseen=unseen)

    save_classifier(
        layout.pattern_classifier(stage.out_root),
        trained.ensembles,
        classifier.channels,
        classifier.input_size,
        classifier.input_channels,
        settings.labels_from,
    )
    write_table(layout.pattern_labels(stage.out_root), trained.labelled.origin)
    picks = pick_examples(trained.out_of_fold, trained.labelled.map_set)
    summary = training_summary(trained, cfg.model.name)
    stage.write_outputs(
        "patterns_train",
        tables={**trained.tables, "examples": picks},
        figures={"fig1_pattern_examples": pattern_examples_figure(picks, trained.labelled.map_set)},
        metrics=trained.metrics,
        config={"labels_from": list(settings.labels_from), "model": cfg.model.name},
        texts={"summary.txt": summary},
    )
    log.info("%s", summary)


if __name__ == "__main__":
    stage_main(run)
