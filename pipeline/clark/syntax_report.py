"""The clark_syntax analysis: dependency-relation heads and the attention-only probe on UD
(Clark et al. 2019, Secs. 4.2 and 5).

Each sentence of both splits is encoded alone (one segment) and its word maps are streamed
once; they feed the per-relation counts (pipeline.clark.syntax) and the probe's examples
(pipeline.clark.probe), with word vectors too when `probe.word_vectors` names a source of
them. Heads and offsets are chosen, and probes trained, on train; all are reported on dev.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from omegaconf import DictConfig
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.engine import model_shape
from pipeline.clark.probe import ProbeExample, probe_example, probe_uas, train_probe
from pipeline.clark.stream import stream_word_maps
from pipeline.clark.syntax import ALL, HeadCounts, select_and_report
from pipeline.clark.ud import Sentence
from pipeline.clark.vectors import WordVectors
from pipeline.core.heads import head_name
from pipeline.core.stats import binomial_interval

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyntaxReport:
    """The relations table (0-based `layer` and `head`, numbered from 1 when written) and
    metrics ready to write (heads in them named from 1)."""

    relations: pd.DataFrame  # relation, count, select_count, direction, layer, head, ...
    metrics: dict[str, float | int | str]
    train_sentences: int  # sentences that fit in `ud.max_length` pieces
    dev_sentences: int


@dataclass(frozen=True)
class SplitEvidence:
    """What one split's word maps give: relation counts and probe examples."""

    counts: HeadCounts
    probe: list[ProbeExample]  # attention only
    probe_words: list[ProbeExample]  # attention and word vectors (empty without vectors)


def gather_split(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sentence],
    relations: list[str],
    offsets: list[int],
    ud: DictConfig,
    vectors: WordVectors | None,
    split: str,
) -> SplitEvidence:
    """Stream the word maps of `sentences` into relation counts and probe examples."""
    layers, heads = model_shape(model)
    heads = 1 if ud.measure == "rollout" else heads  # rollout: one map per layer
    counts = HeadCounts(relations, offsets, layers, heads)
    probe, probe_words = [], []
    words = [s.words for s in sentences]
    for index, maps in stream_word_maps(
        model,
        tokenizer,
        words,
        ud.batch_size,
        ud.max_length,
        desc=f"UD {split}",
        measure=ud.measure,
    ):
        sentence = sentences[index]
        counts.add(sentence, maps)  # maps [L, H, w + 2, w + 2]
        probe.append(probe_example(sentence, maps))
        if vectors is not None:
            probe_words.append(probe_example(sentence, maps, vectors(sentence.words)))  # [w, d]
    log.info(
        "UD %s: %d sentences, %d longer than %d pieces skipped",
        split,
        len(sentences),
        len(sentences) - len(probe),
        ud.max_length,
    )
    return SplitEvidence(counts, probe, probe_words)


def probe_scores(
    name: str,
    train: Sequence[ProbeExample],
    dev: Sequence[ProbeExample],
    probe: DictConfig,
    seed: int,
) -> dict[str, float]:
    """`<name>_uas` on dev and `<name>_train_uas` of a probe trained on `train` (none
    without training examples)."""
    if not train:
        return {}
    fitted = train_probe(train, probe.epochs, probe.batch_size, probe.learning_rate, seed)
    return {
        f"{name}_uas": probe_uas(fitted, dev, probe.batch_size),
        f"{name}_train_uas": probe_uas(fitted, train, probe.batch_size),
    }


def with_intervals(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with the exact binomial (Clopper-Pearson) 95% interval of each relation's
    head and offset accuracy over its `count` dev arcs: `head_ci_low`, `head_ci_high`,
    `offset_ci_low`, `offset_ci_high`. Arcs of one sentence are treated as independent, so
    the intervals are somewhat narrow."""
    columns = {}
    for kind in ("head", "offset"):
        found = [
            binomial_interval(round(accuracy * count), count)
            for accuracy, count in zip(table[f"{kind}_accuracy"], table["count"], strict=True)
        ]
        columns[f"{kind}_ci_low"] = [interval.low for interval in found]
        columns[f"{kind}_ci_high"] = [interval.high for interval in found]
    return table.assign(**columns)


def relation_metrics(table: pd.DataFrame) -> dict[str, float | str]:
    """Each relation's head and offset accuracy, and the best head for all relations."""
    metrics: dict[str, float | str] = {
        f"{row.relation.replace(' ', '_')}_{kind}_accuracy": float(getattr(row, f"{kind}_accuracy"))
        for row in table.itertuples()
        for kind in ("head", "offset")
    }
    overall = table[table["relation"] == ALL].iloc[0]
    metrics["all_relations_best_head"] = head_name(overall["layer"], overall["head"])
    for kind in ("head", "offset"):
        for bound in ("low", "high"):
            key = f"{kind}_ci_{bound}"
            metrics[f"all_relations_{kind}_accuracy_ci_{bound}"] = float(overall[key])
    return metrics


def analyse_syntax(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    ud: DictConfig,
    probe: DictConfig,
    seed: int,
) -> SyntaxReport:
    """Relation heads and probes of an engine-attached `model`, chosen on `train` and
    reported on `dev`. `ud` and `probe` are the `clark_syntax` config nodes: `ud` gives
    batch_size, max_length, max_offset and min_count; `probe` epochs, batch_size,
    learning_rate and word_vectors (None: no attention-and-words probe)."""
    sentences = [*train, *dev]
    relations = sorted({relation for s in sentences for relation in s.relations})
    offsets = [o for o in range(-ud.max_offset, ud.max_offset + 1) if o != 0]
    vectors = None
    if probe.word_vectors:
        vectors = WordVectors(probe.word_vectors, {word for s in sentences for word in s.words})
    selected = gather_split(model, tokenizer, train, relations, offsets, ud, vectors, "train")
    reported = gather_split(model, tokenizer, dev, relations, offsets, ud, vectors, "dev")
    table = with_intervals(select_and_report(selected.counts, reported.counts, ud.min_count))
    metrics = relation_metrics(table)
    metrics |= probe_scores("probe", selected.probe, reported.probe, probe, seed)
    metrics |= probe_scores("probe_words", selected.probe_words, reported.probe_words, probe, seed)
    if vectors is not None:
        metrics["word_vector_coverage"] = vectors.coverage
    sizes = {"train_sentences": len(selected.probe), "dev_sentences": len(reported.probe)}
    log.info(
        "clark_syntax: all relations %.3f (offset %.3f), probe UAS %s",
        metrics["all_relations_head_accuracy"],
        metrics["all_relations_offset_accuracy"],
        metrics.get("probe_uas"),
    )
    return SyntaxReport(table, metrics | sizes, **sizes)
