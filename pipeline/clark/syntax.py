"""The clark_syntax analysis: dependency-relation heads and the attention-only probe on UD
(Clark et al. 2019, Secs. 4.2 and 5).

Each sentence of both splits is encoded alone (one segment) and its word maps are streamed
once; they feed the per-relation counts (pipeline.clark.relations) and the probe's examples
(pipeline.clark.probe), with word vectors too when `probe.word_vectors` names a source of
them. Heads and offsets are chosen, and probes trained, on train; all are reported on dev,
against the best offset and the right-branching parse, with 95% intervals bootstrapped over
dev sentences (paired where two predictors share the dev arcs). The best head for all
relations is also read against the specialised heads of Clark et al.'s Table 1: its gain
over its offset as a fraction of their median gain (`relative_gain`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.analyses.clark_syntax.settings import ClarkSyntaxConfig, ProbeConfig, TreebankConfig
from pipeline.attention.engine import model_shape
from pipeline.clark import figures
from pipeline.clark.probe import (
    ProbeExample,
    probe_example,
    probe_uas,
    right_branching_hits,
    sentence_hits,
    train_probe,
    uas,
)
from pipeline.clark.published import SPECIALISED
from pipeline.clark.relations import ALL, ArcOutcomes, hits_per_sentence, select_and_report
from pipeline.clark.stream import stream_word_maps
from pipeline.clark.ud import Sentence
from pipeline.clark.vectors import WordVectors
from pipeline.core.errors import PipelineError
from pipeline.core.head_names import head_name, numbered_from_one
from pipeline.core.io import Captioned
from pipeline.core.stats import bootstrap_interval

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyntaxReport:
    """The relations table (0-based `layer` and `head`, numbered from 1 when written) and
    metrics ready to write (heads in them named from 1)."""

    relations: pd.DataFrame  # relation, count, select_count, direction, layer, head, ...
    metrics: dict[str, float | int | str]
    train_sentences: int  # sentences that fit in `ud.max_length` pieces
    dev_sentences: int

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem, layers and heads numbered from 1."""
        return {"relations": numbered_from_one(self.relations)}


@dataclass(frozen=True)
class SplitEvidence:
    """What one split's word maps give: per-arc outcomes and probe examples."""

    counts: ArcOutcomes
    probe: list[ProbeExample]  # attention only
    probe_words: list[ProbeExample]  # attention and word vectors (empty without vectors)


def gather_split(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[Sentence],
    relations: list[str],
    offsets: list[int],
    ud: TreebankConfig,
    vectors: WordVectors | None,
    split: str,
) -> SplitEvidence:
    """Stream the word maps of `sentences` into relation counts and probe examples."""
    layers, heads = model_shape(model)
    heads = 1 if ud.measure == "rollout" else heads  # rollout: one map per layer
    counts = ArcOutcomes(relations, offsets, layers, heads)
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
    probe: ProbeConfig,
    seed: int,
    baseline: np.ndarray,
    resamples: int,
) -> dict[str, float]:
    """`<name>_uas` on dev and `<name>_minus_right_branching` (the paired difference from the
    right-branching baseline's hits per dev sentence `baseline`, int [S, 2]), each with its
    95% interval bootstrapped over dev sentences, and `<name>_train_uas` of a probe trained
    on `train` (none without training examples)."""
    if not train:
        return {}
    fitted = train_probe(train, probe.epochs, probe.batch_size, probe.learning_rate, seed)
    hits = sentence_hits(fitted, dev, probe.batch_size)  # [S, 2]
    found = bootstrap_interval(
        lambda mine, base: np.array([uas(mine), uas(mine) - uas(base)]),
        hits,
        baseline,
        n_resamples=resamples,
        seed=seed,
    )
    return (
        found[0].as_dict(f"{name}_uas")
        | found[1].as_dict(f"{name}_minus_right_branching")
        | {f"{name}_train_uas": probe_uas(fitted, train, probe.batch_size)}
    )


INTERVAL_COLUMNS = ("head_accuracy", "offset_accuracy", "head_minus_offset")


def with_intervals(
    table: pd.DataFrame, report: ArcOutcomes, resamples: int, seed: int
) -> pd.DataFrame:
    """`table` with `head_minus_offset` (head accuracy - offset accuracy on the same arcs)
    and 95% percentile intervals of it and of both accuracies (`<column>_ci_low`,
    `<column>_ci_high`), bootstrapped over the report split's sentences: the arcs of one
    sentence are resampled together, and the head and offset stay paired on them."""
    arcs, heads, offsets = hits_per_sentence(table, report)  # int [S, T] each

    def accuracies(arcs: np.ndarray, heads: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        right = np.concatenate([heads.sum(0), offsets.sum(0), (heads - offsets).sum(0)])  # [3T]
        with np.errstate(invalid="ignore", divide="ignore"):  # a relation absent: NaN
            return right / np.tile(arcs.sum(0), 3)

    found = bootstrap_interval(accuracies, arcs, heads, offsets, n_resamples=resamples, seed=seed)
    columns = {}
    for k, name in enumerate(INTERVAL_COLUMNS):
        part = found[k * len(table) : (k + 1) * len(table)]
        columns[name] = [interval.estimate for interval in part]
        columns[f"{name}_ci_low"] = [interval.low for interval in part]
        columns[f"{name}_ci_high"] = [interval.high for interval in part]
    return table.assign(**columns)


def relative_gain(
    table: pd.DataFrame, report: ArcOutcomes, resamples: int, seed: int
) -> dict[str, float | int]:
    """`all_relations_relative_gain`: the best head for all relations' gain over its offset
    divided by the median gain of the relations Clark et al.'s Table 1 calls specialised
    (pipeline.clark.published.SPECIALISED, those the table scored), with its 95% interval
    bootstrapped over the report split's sentences (as `with_intervals`; a resample whose
    median gain is not positive is left out; no ratio at all when the data's own median gain
    is not positive); and how many relations the median ran over
    (`relative_gain_relations`). None of them when fewer than three were scored."""
    wanted = {row.scored for row in SPECIALISED.values()}
    specialised = np.flatnonzero(table["relation"].isin(wanted).to_numpy())
    everything = int(np.flatnonzero((table["relation"] == ALL).to_numpy())[0])
    if len(specialised) < 3:
        return {}
    arcs, heads, offsets = hits_per_sentence(table, report)  # int [S, T] each

    def ratio(arcs: np.ndarray, heads: np.ndarray, offsets: np.ndarray) -> float:
        with np.errstate(invalid="ignore", divide="ignore"):  # a relation absent: NaN
            gains = (heads.sum(0) - offsets.sum(0)) / arcs.sum(0)  # [T]
        typical = float(np.median(gains[specialised]))
        return gains[everything] / typical if typical > 0 else np.nan

    counted = {"relative_gain_relations": len(specialised)}
    if not np.isfinite(ratio(arcs, heads, offsets)):
        return counted  # no positive median gain to divide by: no ratio, and no NaN written
    found = bootstrap_interval(ratio, arcs, heads, offsets, n_resamples=resamples, seed=seed)
    return found.as_dict("all_relations_relative_gain") | counted


def relation_metrics(table: pd.DataFrame) -> dict[str, float | str]:
    """Per relation (and `all_relations`): head and offset accuracy and their difference,
    each with its interval; and the best head for all relations."""
    metrics: dict[str, float | str] = {
        f"{row['relation'].replace(' ', '_')}_{name}{suffix}": float(row[f"{name}{suffix}"])
        for _, row in table.iterrows()
        for name in INTERVAL_COLUMNS
        for suffix in ("", "_ci_low", "_ci_high")
    }
    overall = table[table["relation"] == ALL].iloc[0]
    metrics["all_relations_best_head"] = head_name(overall["layer"], overall["head"])
    return metrics


def analyse_syntax(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train: Sequence[Sentence],
    dev: Sequence[Sentence],
    settings: ClarkSyntaxConfig,
    seed: int,
) -> SyntaxReport:
    """Relation heads and probes of an engine-attached `model`, chosen on `train` and
    reported on `dev`. `settings.ud` gives batch_size, max_length, max_offset and min_count;
    `settings.probe` epochs, batch_size, learning_rate and word_vectors (None: no
    attention-and-words probe). Intervals are bootstrapped over dev sentences with
    `settings.bootstrap_resamples` resamples seeded by `seed`."""
    ud, probe, bootstrap_resamples = settings.ud, settings.probe, settings.bootstrap_resamples
    sentences = [*train, *dev]
    relations = sorted({arc.relation for s in sentences for arc in s.arcs})
    offsets = [o for o in range(-ud.max_offset, ud.max_offset + 1) if o != 0]
    vectors = None
    if probe.word_vectors:
        vectors = WordVectors(probe.word_vectors, {word for s in sentences for word in s.words})
    selected = gather_split(model, tokenizer, train, relations, offsets, ud, vectors, "train")
    reported = gather_split(model, tokenizer, dev, relations, offsets, ud, vectors, "dev")
    if len(reported.probe) < 2:
        raise PipelineError(
            f"only {len(reported.probe)} UD dev sentence fits in {ud.max_length} pieces; an "
            "interval needs two or more: raise clark_syntax.ud.dev_sentences or max_length"
        )
    table = select_and_report(selected.counts, reported.counts, ud.min_count)
    table = with_intervals(table, reported.counts, bootstrap_resamples, seed)
    metrics = relation_metrics(table)
    metrics |= relative_gain(table, reported.counts, bootstrap_resamples, seed)
    baseline = right_branching_hits(reported.probe)  # [S, 2]
    metrics |= bootstrap_interval(
        uas, baseline, n_resamples=bootstrap_resamples, seed=seed
    ).as_dict("right_branching_uas")
    for name, train_examples, dev_examples in (
        ("probe", selected.probe, reported.probe),
        ("probe_words", selected.probe_words, reported.probe_words),
    ):
        metrics |= probe_scores(
            name, train_examples, dev_examples, probe, seed, baseline, bootstrap_resamples
        )
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


def syntax_figures(report: SyntaxReport, model: str, ud: TreebankConfig) -> dict[str, Captioned]:
    """The best head and offset per dependency relation, by file stem."""
    return {
        "relations": Captioned(
            figures.relation_heads(report.relations),
            f"Accuracy on UD dev ({report.dev_sentences} sentences) of the best {model} "
            f"head per dependency relation and of the best fixed offset, both chosen on "
            f"{report.train_sentences} train sentences; whiskers: 95% intervals bootstrapped "
            f"over dev sentences.",
            {"train_sentences": ud.train_sentences, "dev_sentences": ud.dev_sentences},
        )
    }
