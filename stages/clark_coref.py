"""clark_coref: the coreference head on GAP (Clark et al. 2019, Sec. 4.3).

Streams the pre-trained model's attention over `clark_coref.select_examples` GAP
development texts and `clark_coref.report_examples` validation texts, scores every head by
how often the pronoun attends most to its antecedent rather than the other name, chooses
the best head on development and reports it on validation against the nearest-name
baseline, with 95% intervals bootstrapped over the validation examples
(`clark_coref.bootstrap_resamples`; the head - baseline difference paired on them). Writes
outputs/plots/clark_coref/heads.csv (every head, both splits),
outputs/figures/clark_coref/heads.png and outputs/metrics/clark_coref/gap.json. Layers and
heads are numbered from 1 in every output. The analysis is pipeline.clark.coref_report.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.attention.encoder import load_attached_encoder
from pipeline.clark import figures
from pipeline.clark.coref import read_gap_sample
from pipeline.clark.coref_report import analyse_coref
from pipeline.core.config import shared_data_dir
from pipeline.core.heads import numbered_from_one
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.clark_coref
    folder = Path(settings.dir or shared_data_dir(cfg) / "gap_coreference")
    select = read_gap_sample(folder, "development", settings.select_examples, cfg.seed)
    held_out = read_gap_sample(folder, "validation", settings.report_examples, cfg.seed)
    model, tokenizer = load_attached_encoder(cfg)
    report = analyse_coref(
        model,
        tokenizer,
        select,
        held_out,
        settings.max_length,
        settings.batch_size,
        settings.bootstrap_resamples,
        cfg.seed,
    )

    write_table(stage.out("plots", "clark_coref", "heads.csv"), numbered_from_one(report.heads))
    save_figure(
        stage.out("figures", "clark_coref", "heads.png"),
        figures.coref_heads(report.heads, report.comparison),
        f"Share of GAP validation pronouns ({report.report_examples}) whose {cfg.model.name} "
        f"head attends more to the correct name than to the other; the head reported is "
        f"chosen on {report.select_examples} development examples. Whiskers: 95% intervals "
        f"bootstrapped over the validation examples.",
        {"select_examples": settings.select_examples, "report_examples": settings.report_examples},
    )
    write_json(stage.out("metrics", "clark_coref", "gap.json"), report.metrics)


if __name__ == "__main__":
    stage_main(run)
