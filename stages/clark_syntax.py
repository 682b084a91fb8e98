"""clark_syntax: dependency-relation heads and the attention-only probe on UD (Clark et al. 2019).

Streams the pre-trained model's attention over `clark_syntax.ud.train_sentences` sentences
of the UD train split and `clark_syntax.ud.dev_sentences` of dev (each sentence alone, one
segment), as word-level maps. Per relation it chooses the best head (either direction) and
the best fixed offset on train and reports both on dev (outputs/plots/clark_syntax/
relations.csv and outputs/figures/clark_syntax/relations.png); it trains the attention-only
probe on the same train sentences and reports its UAS on dev without punctuation, and, when
`clark_syntax.probe.word_vectors` names a source of GloVe vectors, the attention-and-words
probe too, each against the right-branching parse. Every reported number carries a 95%
interval bootstrapped over dev sentences (`clark_syntax.bootstrap_resamples`), paired for
head - offset and probe - right-branching. Headline numbers go to
outputs/metrics/clark_syntax/ud.json. Layers and heads are numbered from 1 in every output.
The analysis is pipeline.clark.syntax.
"""

from __future__ import annotations

from pipeline.attention.encoder import load_attached_encoder
from pipeline.clark.syntax import analyse_syntax, syntax_figures
from pipeline.clark.ud import read_treebank_sample
from pipeline.core.stage import StageRun, stage_main
from pipeline.data import sources


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.settings("clark_syntax")
    ud = settings.ud
    folder = sources.ud(cfg.paths.shared_data, settings).folder
    train = read_treebank_sample(folder, "train", ud.train_sentences, cfg.seed)
    dev = read_treebank_sample(folder, "dev", ud.dev_sentences, cfg.seed)
    model, tokenizer = load_attached_encoder(stage.settings("model"), stage.device, cfg.seed)
    report = analyse_syntax(model, tokenizer, train, dev, settings, cfg.seed)
    stage.write_outputs(
        "clark_syntax",
        tables=report.tables,
        figures=syntax_figures(report, cfg.model.name, ud),
        metrics=report.metrics,
    )


if __name__ == "__main__":
    stage_main(run)
