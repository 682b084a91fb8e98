"""The clark_coref analysis: the coreference head on GAP (Clark et al. 2019, Sec. 4.3).

Every head is scored on two splits by how often the pronoun attends more to its antecedent
than to the other name (pipeline.clark.gap); the best head is chosen on the first split
and reported on the second, against the nearest-name baseline. The report split's
accuracies and the head's paired difference from the baseline carry 95% intervals
bootstrapped over its examples.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.analyses.clark_coref.settings import ClarkCorefConfig
from pipeline.attention.capture import stream_maps
from pipeline.clark import figures
from pipeline.clark.gap import (
    GapExample,
    encode_gap,
    head_correct,
    name_scores,
    nearest_candidate,
)
from pipeline.core.errors import PipelineError
from pipeline.core.head_names import head_name, numbered_from_one
from pipeline.core.io import Captioned
from pipeline.core.stats import Interval, bootstrap_interval

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitScores:
    """One split, on the examples whose pronoun and names fit in max_length pieces: whether
    each head, and the nearest-name baseline, picks the right name."""

    correct: np.ndarray  # bool [E, L, H]
    nearest_correct: np.ndarray  # bool [E]

    @property
    def heads(self) -> np.ndarray:
        """Each head's accuracy: float [L, H]."""
        return self.correct.mean(0)

    @property
    def examples(self) -> int:
        return len(self.nearest_correct)


@dataclass(frozen=True)
class CorefReport:
    """The heads table (0-based `layer` and `head`, numbered from 1 when written) and metrics
    ready to write (heads in them named from 1)."""

    heads: pd.DataFrame  # layer, head, select_accuracy, report_accuracy (+ _ci_low, _ci_high)
    comparison: dict[str, Interval]  # the best head and the nearest-name baseline, on report
    metrics: dict[str, float | int | str]
    select_examples: int
    report_examples: int

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem, layers and heads numbered from 1."""
        return {"heads": numbered_from_one(self.heads)}


def score_split(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    examples: Sequence[GapExample],
    max_length: int,
    batch_size: int,
    role: str,
) -> SplitScores:
    """Every head of an engine-attached `model`, and the baseline, on the examples that fit."""
    encoded = [encode_gap(tokenizer, e, max_length) for e in examples]
    kept = [i for i, item in enumerate(encoded) if item is not None]
    if not kept:
        raise PipelineError(
            f"none of the {len(examples)} GAP {role} examples fits in {max_length} pieces; "
            "raise clark_coref.max_length or the number of examples"
        )
    scores = {}
    stream = stream_maps(
        model,
        [encoded[i].encoding for i in kept],
        batch_size,
        tokenizer.pad_token_id,
        f"GAP {role}",
    )
    for position, maps in stream:
        scores[position] = name_scores(maps, encoded[kept[position]])  # [2, L, H]
    answers = [examples[i].answer for i in kept]
    correct = head_correct([scores[p] for p in range(len(kept))], answers)  # [E, L, H]
    nearest = np.array([nearest_candidate(examples[i]) == examples[i].answer for i in kept])
    log.info(
        "GAP %s: %d of %d examples fit in %d pieces", role, len(kept), len(examples), max_length
    )
    return SplitScores(correct, nearest)


def best_against_nearest(
    held_out: SplitScores, layer: int, head: int, resamples: int, seed: int
) -> list[Interval]:
    """Accuracy of head (layer, head), of the nearest-name baseline and their difference on
    the same examples, each with its 95% interval bootstrapped over the examples."""
    return bootstrap_interval(
        lambda mine, nearest: np.array([mine.mean(), nearest.mean(), mine.mean() - nearest.mean()]),
        held_out.correct[:, layer, head],
        held_out.nearest_correct,
        n_resamples=resamples,
        seed=seed,
    )


def analyse_coref(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    select: Sequence[GapExample],
    report: Sequence[GapExample],
    settings: ClarkCorefConfig,
    seed: int,
) -> CorefReport:
    """The best head of an engine-attached `model` chosen on `select`, reported on `report`
    with intervals bootstrapped over its examples (`settings.bootstrap_resamples`, seeded by
    `seed`); `settings.max_length` and `batch_size` shape the forward passes."""
    max_length, batch_size = settings.max_length, settings.batch_size
    bootstrap_resamples = settings.bootstrap_resamples
    chosen = score_split(model, tokenizer, select, max_length, batch_size, "select")
    held_out = score_split(model, tokenizer, report, max_length, batch_size, "report")
    if held_out.examples < 2:
        raise PipelineError(
            f"only {held_out.examples} GAP report example fits in {max_length} pieces; an "
            "interval needs two or more: raise clark_coref.report_examples or max_length"
        )
    layer, head = np.unravel_index(chosen.heads.argmax(), chosen.heads.shape)
    layers, heads = np.indices(chosen.heads.shape).reshape(2, -1)
    every_head = bootstrap_interval(
        lambda correct: correct.mean(0),
        held_out.correct.reshape(held_out.examples, -1),  # [E, L * H]
        n_resamples=bootstrap_resamples,
        seed=seed,
    )
    table = pd.DataFrame(
        {
            "layer": layers,
            "head": heads,
            "select_accuracy": chosen.heads.reshape(-1),
            "report_accuracy": held_out.heads.reshape(-1),
            "report_accuracy_ci_low": [interval.low for interval in every_head],
            "report_accuracy_ci_high": [interval.high for interval in every_head],
        }
    )
    best, nearest, difference = best_against_nearest(
        held_out, layer, head, bootstrap_resamples, seed
    )
    metrics = (
        {"best_head": head_name(layer, head)}
        | best.as_dict("head_accuracy")
        | {"head_select_accuracy": float(chosen.heads[layer, head])}
        | nearest.as_dict("nearest_baseline_accuracy")
        | difference.as_dict("head_minus_nearest")
        | {
            "best_report_head_accuracy": float(held_out.heads.max()),
            "select_examples": chosen.examples,
            "report_examples": held_out.examples,
        }
    )
    log.info("clark_coref: %s", metrics)
    comparison = {f"best head {head_name(layer, head)}": best, "nearest name": nearest}
    return CorefReport(table, comparison, metrics, chosen.examples, held_out.examples)


def coref_figures(
    report: CorefReport, model: str, settings: ClarkCorefConfig
) -> dict[str, Captioned]:
    """The coreference heads against the nearest-name baseline, by file stem."""
    return {
        "heads": Captioned(
            figures.coref_heads(report.heads, report.comparison),
            f"Share of GAP validation pronouns ({report.report_examples}) whose {model} "
            f"head attends more to the correct name than to the other; the head reported is "
            f"chosen on {report.select_examples} development examples. Whiskers: 95% "
            f"intervals bootstrapped over the validation examples.",
            {
                "select_examples": settings.select_examples,
                "report_examples": settings.report_examples,
            },
        )
    }
