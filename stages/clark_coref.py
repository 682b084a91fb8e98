"""clark_coref: the coreference head on GAP (Clark et al. 2019, Sec. 4.3).

Streams the pre-trained model's attention over `clark_coref.select_examples` GAP
development texts and `clark_coref.report_examples` validation texts, scores every head by
how often the pronoun attends most to its antecedent rather than the other name, chooses
the best head on development and reports it on validation against the nearest-name
baseline, with 95% intervals bootstrapped over the validation examples
(`clark_coref.bootstrap_resamples`; the head - baseline difference paired on them). Writes
outputs/plots/clark_coref/heads.csv (every head, both splits),
outputs/figures/clark_coref/heads.png and outputs/metrics/clark_coref/gap.json. Layers and
heads are numbered from 1 in every output. The analysis is pipeline.clark.coref.
"""

from __future__ import annotations

from pipeline.attention.encoder import load_attached_encoder
from pipeline.clark.coref import analyse_coref, coref_figures
from pipeline.clark.gap import read_gap_sample
from pipeline.core.stage import StageRun, stage_main
from pipeline.data import sources


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.settings("clark_coref")
    gap = sources.gap(cfg.paths.shared_data, settings)
    gap.check()
    folder = gap.folder
    select = read_gap_sample(folder, "development", settings.select_examples, cfg.seed)
    held_out = read_gap_sample(folder, "validation", settings.report_examples, cfg.seed)
    model, tokenizer = load_attached_encoder(stage.settings("model"), stage.device, cfg.seed)
    report = analyse_coref(model, tokenizer, select, held_out, settings, cfg.seed)
    stage.write_outputs(
        "clark_coref",
        tables=report.tables,
        figures=coref_figures(report, cfg.model.name, settings),
        metrics=report.metrics,
    )


if __name__ == "__main__":
    stage_main(run)
