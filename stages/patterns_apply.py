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
"""

from __future__ import annotations

import logging

import pandas as pd
import torch

from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.patterns.apply import (
    class_shares,
    classify,
    example_maps_table,
    pick_examples,
)
from pipeline.kovaleva.patterns.cnn import load_classifier
from pipeline.kovaleva.patterns.figures import pattern_examples_figure, pattern_shares_figure
from pipeline.kovaleva.patterns.heuristic import Thresholds
from pipeline.kovaleva.patterns.maps import open_stores

log = logging.getLogger(__name__)

FIG1_MAX_TOKENS = 40  # Fig. 1 prefers maps short enough to label every token


def run(stage: StageRun) -> None:
    settings = stage.cfg.patterns
    torch.set_num_threads(settings.classifier.threads)
    model, input_size = load_classifier(stage.upstream("patterns", "cnn.pt"))
    stores = open_stores(stage.upstream("attention"), stage.task_names, stage.cfg.model.name)
    thresholds = Thresholds(**settings.heuristic)
    parts = []
    for task, store in stores.items():
        for variant in store.variants:
            examples = store.example_ids(variant, task)[: settings.num_examples]
            parts.append(classify(model, input_size, store, variant, task, examples, thresholds))
    predictions = pd.concat(parts, ignore_index=True)
    shares = class_shares(predictions)
    examples = example_maps_table(pick_examples(predictions, "finetuned", FIG1_MAX_TOKENS), stores)

    agreement = (
        (predictions["label"] == predictions["heuristic"])
        .groupby([predictions["task"], predictions["variant"]])
        .mean()
    )
    metrics = {
        f"{task}_{variant}_{name}": round(share, 4)
        for task, variant, name, _, share in shares.itertuples(index=False)
    }
    metrics.update({f"{t}_{v}_heuristic_agreement": round(a, 4) for (t, v), a in agreement.items()})

    write_table(stage.out("patterns", "predictions.parquet"), predictions)
    write_table(stage.out("plots", "patterns_apply", "shares.csv"), shares)
    write_table(stage.out("plots", "patterns_apply", "examples.csv"), examples)
    write_json(stage.out("metrics", "patterns_apply.json"), metrics)
    config = {"num_examples": settings.num_examples, "model": stage.cfg.model.name}
    save_figure(
        stage.out("figures", "patterns_apply", "fig2_pattern_shares.png"),
        pattern_shares_figure(shares),
        "Share of each attention-pattern class (CNN) among all heads' maps on dev examples, "
        "per task, for the pre-trained and the fine-tuned model (paper Fig. 2).",
        config,
    )
    save_figure(
        stage.out("figures", "patterns_apply", "fig1_pattern_examples.png"),
        pattern_examples_figure(examples),
        "One fine-tuned attention map per pattern class: the CNN's most confident prediction "
        "that the heuristic agrees with (paper Fig. 1). Rows: queries; columns: keys.",
        config,
    )
    log.info("pattern shares:\n%s", shares.pivot_table("share", ["task", "variant"], "class"))


if __name__ == "__main__":
    stage_main(run)
