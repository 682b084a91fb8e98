"""The clark_coref analysis: the coreference head on GAP (Clark et al. 2019, Sec. 4.3).

Every head is scored on two splits by how often the pronoun attends more to its antecedent
than to the other name (pipeline.clark.coref); the best head is chosen on the first split
and reported on the second, against the nearest-name baseline.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.capture import stream_maps
from pipeline.clark.coref import (
    GapExample,
    encode_gap,
    head_accuracy,
    name_scores,
    nearest_candidate,
)
from pipeline.core.errors import PipelineError
from pipeline.core.heads import head_name

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitScores:
    """One split: each head's accuracy, the nearest-name baseline's, and examples used."""

    heads: np.ndarray  # float [L, H]
    nearest: float
    examples: int  # examples whose pronoun and names fit in max_length pieces


@dataclass(frozen=True)
class CorefReport:
    """The heads table (0-based `layer` and `head`, numbered from 1 when written) and metrics
    ready to write (heads in them named from 1)."""

    heads: pd.DataFrame  # layer, head, select_accuracy, report_accuracy
    nearest_accuracy: float  # the nearest-name baseline on the report split
    metrics: dict[str, float | int | str]
    select_examples: int
    report_examples: int


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
    accuracy = head_accuracy([scores[p] for p in range(len(kept))], answers)  # [L, H]
    nearest = float(np.mean([nearest_candidate(examples[i]) == examples[i].answer for i in kept]))
    log.info(
        "GAP %s: %d of %d examples fit in %d pieces", role, len(kept), len(examples), max_length
    )
    return SplitScores(accuracy, nearest, len(kept))


def analyse_coref(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    select: Sequence[GapExample],
    report: Sequence[GapExample],
    max_length: int,
    batch_size: int,
) -> CorefReport:
    """The best head of an engine-attached `model` chosen on `select`, reported on `report`."""
    chosen = score_split(model, tokenizer, select, max_length, batch_size, "select")
    held_out = score_split(model, tokenizer, report, max_length, batch_size, "report")
    layer, head = np.unravel_index(chosen.heads.argmax(), chosen.heads.shape)
    layers, heads = np.indices(chosen.heads.shape).reshape(2, -1)
    table = pd.DataFrame(
        {
            "layer": layers,
            "head": heads,
            "select_accuracy": chosen.heads.reshape(-1),
            "report_accuracy": held_out.heads.reshape(-1),
        }
    )
    metrics = {
        "best_head": head_name(layer, head),
        "head_accuracy": float(held_out.heads[layer, head]),
        "head_select_accuracy": float(chosen.heads[layer, head]),
        "nearest_baseline_accuracy": held_out.nearest,
        "best_report_head_accuracy": float(held_out.heads.max()),
        "select_examples": chosen.examples,
        "report_examples": held_out.examples,
    }
    log.info("clark_coref: %s", metrics)
    return CorefReport(table, held_out.nearest, metrics, chosen.examples, held_out.examples)
