"""patterns_apply: the share of each attention-pattern type per task and model (Fig. 2).

Runs once per fine-tuning seed of `seeds`. Classifies, with the CNN of patterns_train, the map
of every layer x head on the first `patterns.num_examples` dumped dev examples of each task
(outputs/attention/<task>/seed<seed>.parquet: the dump's seeded sample), for the pre-trained
and the fine-tuned model. Writes outputs/patterns/predictions/seed<seed>.parquet (one row per
map: the CNN's type and probability, the seed-stability ensemble's type, the rule's type;
layers and heads from 1), the table of shares outputs/plots/patterns_apply/seed<seed>/shares.csv
(task, variant, class, count, share, ci_low, ci_high: 95% bootstrap intervals over examples),
Fig. 2 under outputs/figures/patterns_apply/seed<seed>/ (the shares estimated from the share
round below where there is one, else these), the vertical type's margin
over the next type and its share on [CLS]/[SEP] columns
outputs/plots/patterns_apply/seed<seed>/vertical.csv (task, variant, statistic, maps,
estimate, ci_low, ci_high), and outputs/metrics/patterns_apply/seed<seed>.json
(`<task>.<variant>.<class>`, `.vertical_margin`, `.vertical_on_special`, each with its
interval, the agreement with the rule, and `seed_stability.max_share_change`).

Where the model's label folder data/annotations/<model.name>/ holds a share round (its frozen
`stratifier.pt` and maps drawn by its call, tools.patterns_round), the stratifier calls every
map too (predictions' column `call`), and each type's share is estimated from the round's
labels by eye (pipeline/kovaleva/patterns/share_estimate.py): the table
outputs/plots/patterns_apply/seed<seed>/estimated_shares.csv (task, variant, type, share,
ci_low, ci_high, reason; `first_three` is the first three types together) and the metrics
`<task>.<variant>.estimated.<type>`, which the share claims read. A model without a round
gets no estimate (the stage says so), and its share claims are not testable.
"""

from __future__ import annotations

import logging

import torch

from pipeline.core import layout
from pipeline.core.head_names import numbered_from_one
from pipeline.core.io import write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.apply import classify_heads, load_share_round
from pipeline.kovaleva.patterns.cnn import load_classifier
from pipeline.kovaleva.patterns.figures import pattern_shares_figure
from pipeline.kovaleva.patterns.maps import open_stores

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    cfg, settings, seed = stage.cfg, stage.settings("patterns"), stage.seed_folder
    torch.set_num_threads(settings.classifier.threads)
    classifier = load_classifier(layout.pattern_classifier(stage.upstream(reader="patterns_apply")))
    stores = open_stores(stage.upstream("attention"), stage.task_names, cfg.model.name, stage.seed)
    classified = classify_heads(
        classifier.ensembles,
        classifier.input_size,
        classifier.input_channels,
        stores,
        settings,
        cfg.seed,
        load_share_round(stage.data("annotations", cfg.model.name), classifier),
    )
    predictions = numbered_from_one(classified.predictions)
    write_table(layout.pattern_predictions(stage.out_root, stage.seed), predictions)
    figure = pattern_shares_figure(classified.shares, classified.estimated)
    stage.write_outputs(
        "patterns_apply",
        seed,
        tables=classified.tables(),
        figures={"fig2_pattern_shares": figure},
        metrics=classified.metrics,
        config={
            "num_examples": settings.num_examples,
            "model": cfg.model.name,
            "seed": stage.seed,
            "labels_from": list(classifier.trained_on),
        },
    )
    if cfg.model.name not in classifier.trained_on:
        log.warning(
            "the classifier learnt from the maps of %s labelled by eye; %s's maps have no "
            "visual labels among them, so its shares rest on that transfer",
            " and ".join(classifier.trained_on),
            cfg.model.name,
        )
    log.info("%s", classified.summary())


if __name__ == "__main__":
    stage_main(run)
