"""clark_syntax: dependency-relation heads and the attention-only probe on UD (Clark et al. 2019).

Streams the pre-trained model's attention over `clark.ud.train_sentences` sentences of the
UD train split and `clark.ud.dev_sentences` of dev (each sentence alone, one segment), as
word-level maps. Per relation it chooses the best head (either direction) and the best fixed
offset on train and reports both on dev (outputs/plots/clark_syntax/relations.csv and
outputs/figures/clark_syntax/relations.png); it trains the attention-only probe on the same
train sentences and reports its UAS on dev without punctuation, and, when
`clark.probe.word_vectors` names a source of GloVe vectors, the attention-and-words probe
too. Headline numbers go to outputs/metrics/clark_syntax/ud.json.
"""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig

from pipeline.attention.engine import model_shape
from pipeline.clark import figures
from pipeline.clark.probe import ProbeExample, probe_example, probe_uas, train_probe
from pipeline.clark.stream import stream_word_maps
from pipeline.clark.syntax import ALL, HeadCounts, select_and_report
from pipeline.clark.ud import Sentence, read_conllu, sample
from pipeline.clark.vectors import WordVectors
from pipeline.core.config import shared_data_dir
from pipeline.core.errors import PipelineError
from pipeline.core.heads import head_name
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.models.loading import load_attached_encoder

log = logging.getLogger(__name__)


def treebank_file(folder: Path, split: str) -> Path:
    """The one `*-ud-<split>.conllu` file of a UD treebank folder."""
    found = sorted(folder.glob(f"*-ud-{split}.conllu"))
    if len(found) != 1:
        raise PipelineError(
            f"expected one *-ud-{split}.conllu in {folder}, found {len(found)}; "
            "set clark.ud.dir to a UD treebank folder"
        )
    return found[0]


def load_split(cfg: DictConfig, split: str, limit: int | None) -> list[Sentence]:
    folder = Path(cfg.clark_syntax.ud.dir or shared_data_dir(cfg) / "ud_english_ewt")
    sentences = read_conllu(treebank_file(folder, split), cfg.clark_syntax.ud.strip_subtypes)
    return sample(sentences, limit, cfg.seed)


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.clark_syntax.ud
    splits = {
        "train": load_split(cfg, "train", settings.train_sentences),
        "dev": load_split(cfg, "dev", settings.dev_sentences),
    }
    relations = sorted({r for sentences in splits.values() for s in sentences for r in s.relations})
    model, tokenizer = load_attached_encoder(cfg)
    num_layers, num_heads = model_shape(model)
    offsets = [o for o in range(-settings.max_offset, settings.max_offset + 1) if o != 0]

    vectors = None
    if cfg.clark_syntax.probe.word_vectors:
        vocabulary = {w for sentences in splits.values() for s in sentences for w in s.words}
        vectors = WordVectors(cfg.clark_syntax.probe.word_vectors, vocabulary)
    counts: dict[str, HeadCounts] = {}
    probe_data: dict[str, list[ProbeExample]] = {}
    words_data: dict[str, list[ProbeExample]] = {}
    for split, sentences in splits.items():
        counts[split] = HeadCounts(relations, offsets, num_layers, num_heads)
        probe_data[split], words_data[split] = [], []
        words = [s.words for s in sentences]
        for index, maps in stream_word_maps(
            model, tokenizer, words, settings.batch_size, settings.max_length, desc=f"UD {split}"
        ):
            counts[split].add(sentences[index], maps)  # maps [L, H, w + 2, w + 2]
            probe_data[split].append(probe_example(sentences[index], maps))
            if vectors is not None:
                vector_rows = vectors(sentences[index].words)  # [w, d]
                words_data[split].append(probe_example(sentences[index], maps, vector_rows))
        skipped = len(sentences) - len(probe_data[split])
        log.info(
            "UD %s: %d sentences, %d longer than %d pieces skipped",
            split,
            len(sentences),
            skipped,
            settings.max_length,
        )

    table = select_and_report(counts["train"], counts["dev"], settings.min_count)
    probe_cfg = cfg.clark_syntax.probe
    uas = {}
    for name, data in (("probe", probe_data), ("probe_words", words_data)):
        if data["train"]:
            probe = train_probe(
                data["train"],
                probe_cfg.epochs,
                probe_cfg.batch_size,
                probe_cfg.learning_rate,
                cfg.seed,
            )
            uas[f"{name}_uas"] = probe_uas(probe, data["dev"], probe_cfg.batch_size)
            uas[f"{name}_train_uas"] = probe_uas(probe, data["train"], probe_cfg.batch_size)
    write_table(stage.out("plots", "clark_syntax", "relations.csv"), table)
    save_figure(
        stage.out("figures", "clark_syntax", "relations.png"),
        figures.relation_heads(table),
        f"Accuracy on UD dev ({len(probe_data['dev'])} sentences) of the best {cfg.model.name} "
        f"head per dependency relation and of the best fixed offset, both chosen on "
        f"{len(probe_data['train'])} train sentences.",
        {"train_sentences": settings.train_sentences, "dev_sentences": settings.dev_sentences},
    )
    metrics = {
        f"{row.relation.replace(' ', '_')}_{kind}_accuracy": float(getattr(row, f"{kind}_accuracy"))
        for row in table.itertuples()
        for kind in ("head", "offset")
    }
    overall = table[table["relation"] == ALL].iloc[0]
    metrics |= {
        "all_relations_best_head": head_name(overall["layer"], overall["head"]),
        **uas,
        "train_sentences": len(probe_data["train"]),
        "dev_sentences": len(probe_data["dev"]),
    }
    if vectors is not None:
        metrics["word_vector_coverage"] = vectors.coverage
    write_json(stage.out("metrics", "clark_syntax", "ud.json"), metrics)
    log.info(
        "clark_syntax: all relations %.3f (offset %.3f), probe UAS %.3f",
        overall["head_accuracy"],
        overall["offset_accuracy"],
        metrics["probe_uas"],
    )


if __name__ == "__main__":
    stage_main(run)
