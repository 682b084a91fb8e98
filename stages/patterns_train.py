"""patterns_train: the attention-pattern CNN trained on maps labelled by eye (paper Sec. 4.1).

Reads the label folder data/annotations/<patterns.labels_from>/ (maps.npz, sample.csv and
the visual and human labels; one resolved label per map, see pipeline/kovaleva/patterns/
labels.py). Cross-validates the CNN with folds grouped by input example, scores it and the
threshold rule against the visual labels with bootstrap intervals, then trains the final
ensemble (and a second one with the next seeds, for the seed-stability check of
patterns_apply). Writes outputs/patterns/cnn.pt, outputs/patterns/labels.csv (one resolved
label per map), outputs/metrics/patterns_train.json (label counts, the annotators'
agreement, every score `<cnn|rule>.<score>` with `_ci_low`/`_ci_high`); under
outputs/plots/patterns_train/: scores.csv, agreement.csv (annotator pairs),
cross_validation.csv (every labelled map's visual, out-of-fold CNN and rule label),
confusion.csv and summary.txt (the report's statement of what the classifier rests on); and
Fig. 1 (a typical map of each type on which the visual label and the classifier agree)
under outputs/figures/patterns_train/.
"""

from __future__ import annotations

import logging

import torch

from pipeline.core.io import save_figure, write_json, write_table, write_text
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.cnn import save_classifier
from pipeline.kovaleva.patterns.examples import pick_examples
from pipeline.kovaleva.patterns.figures import EXAMPLES_CAPTION, pattern_examples_figure
from pipeline.kovaleva.patterns.fit import train_classifier, training_summary
from pipeline.kovaleva.patterns.settings import PatternSettings

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = PatternSettings.from_config(stage.cfg.patterns, stage.cfg.seed)
    torch.set_num_threads(settings.threads)
    folder = stage.data("annotations", settings.labels_from)
    trained = train_classifier(folder, settings.classifier, settings.thresholds, settings.seed)

    classifier, plots = settings.classifier, stage.out("plots", "patterns_train")
    save_classifier(
        stage.out("patterns", "cnn.pt"),
        trained.ensembles,
        classifier.channels,
        classifier.input_size,
        settings.labels_from,
    )
    write_table(stage.out("patterns", "labels.csv"), trained.labelled.origin)
    write_json(stage.out("metrics", "patterns_train.json"), trained.metrics)
    write_table(plots / "scores.csv", trained.scores)
    write_table(plots / "agreement.csv", trained.agreement)
    write_table(plots / "cross_validation.csv", trained.out_of_fold)
    confusion = trained.out_of_fold.rename(columns={"visual": "actual", "cnn": "predicted"})
    write_table(plots / "confusion.csv", confusion[["map_id", "actual", "predicted"]])
    maps = trained.labelled.map_set
    picks = pick_examples(trained.out_of_fold, maps)
    write_table(plots / "examples.csv", picks)
    config = {"labels_from": settings.labels_from, "model": stage.cfg.model.name}
    figure_path = stage.out("figures", "patterns_train", "fig1_pattern_examples.png")
    save_figure(figure_path, pattern_examples_figure(picks, maps), EXAMPLES_CAPTION, config)
    summary = training_summary(trained, stage.cfg.model.name)
    write_text(plots / "summary.txt", summary)
    log.info("%s", summary)


if __name__ == "__main__":
    stage_main(run)
