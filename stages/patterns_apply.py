"""patterns_apply: the share of each attention-pattern class per task and model (Figs. 1-2).

Classifies, with the CNN of patterns_train, the map of every layer x head on the first
`patterns.num_examples` dumped dev examples of each task, for the pre-trained and the
fine-tuned model. Writes outputs/patterns/predictions.parquet (one row per map: the CNN's
class and probability, and the heuristic's class), the table of class shares
outputs/plots/patterns_apply/shares.csv (task, variant, class, count, share) drawn as Fig. 2,
the maps of Fig. 1 (one per class: the most confident fine-tuned prediction that the
heuristic agrees with) as outputs/plots/patterns_apply/examples.csv, both figures under
outputs/figures/patterns_apply/, and outputs/metrics/patterns_apply.json (each share as
`<task>_<variant>_<class>`, and the CNN's agreement with the heuristic per task and variant).
Layers and heads count from 1 in every file.
"""

from __future__ import annotations

import logging

import torch

from pipeline.core.heads import numbered_from_one
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.apply import classify_heads
from pipeline.kovaleva.patterns.cnn import load_classifier
from pipeline.kovaleva.patterns.figures import (
    EXAMPLES_CAPTION,
    SHARES_CAPTION,
    pattern_examples_figure,
    pattern_shares_figure,
)
from pipeline.kovaleva.patterns.maps import open_stores
from pipeline.kovaleva.patterns.settings import PatternSettings

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = PatternSettings.from_config(stage.cfg.patterns, stage.cfg.seed)
    torch.set_num_threads(settings.threads)
    model, input_size = load_classifier(stage.upstream("patterns", "cnn.pt"))
    stores = open_stores(stage.upstream("attention"), stage.task_names, stage.cfg.model.name)
    classified = classify_heads(model, input_size, stores, settings)

    plots, figures = stage.out("plots", "patterns_apply"), stage.out("figures", "patterns_apply")
    write_table(
        stage.out("patterns", "predictions.parquet"), numbered_from_one(classified.predictions)
    )
    write_table(plots / "shares.csv", classified.shares)
    write_table(plots / "examples.csv", numbered_from_one(classified.examples))
    write_json(stage.out("metrics", "patterns_apply.json"), classified.metrics)
    config = {"num_examples": settings.num_examples, "model": stage.cfg.model.name}
    shares_figure = pattern_shares_figure(classified.shares)
    save_figure(figures / "fig2_pattern_shares.png", shares_figure, SHARES_CAPTION, config)
    examples_figure = pattern_examples_figure(classified.examples)
    save_figure(figures / "fig1_pattern_examples.png", examples_figure, EXAMPLES_CAPTION, config)
    log.info(
        "pattern shares:\n%s",
        classified.shares.pivot_table("share", ["task", "variant"], "class"),
    )


if __name__ == "__main__":
    stage_main(run)
