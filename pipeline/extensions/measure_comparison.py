"""Attention received by token type per layer under three measures (Kobayashi et al. 2020, Fig. 3
style): raw weights, value-weighted norms and rollout, on the same dev examples.

For one example of length n and a map M[l, h, i, j] >= 0 of one measure (weights alpha,
norms ||alpha f(x)|| from pipeline/attention/norms.py, or the rollout R_l from
pipeline/attention/rollout.py as a single head; pipeline/attention/measures.py), the share
that the tokens of type t receive in layer l is

    share_t[l] = mean_{h, i} ( sum_{j : type(j) = t} M[l, h, i, j] / sum_j M[l, h, i, j] )

(for weights and rollout the rows already sum to 1). Types: [CLS], [SEP], punctuation (a
piece made of punctuation characters only) and other; the four shares of a layer add up to
1. The table averages share_t[l] over a seeded sample of dev examples, with a 95% bootstrap
interval over examples.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.analyses.measures.settings import MeasuresConfig
from pipeline.attention.capture import stream_measures
from pipeline.attention.engine import attach
from pipeline.attention.measures import captured_for, measure_maps
from pipeline.attention.pieces import piece_text
from pipeline.core.head_names import layer_name
from pipeline.core.schema import TaskConfig
from pipeline.core.stats import bootstrap_interval
from pipeline.data.sampling import evaluation_sample
from pipeline.models.labelled import labelled_rows

TOKEN_TYPES = ("[CLS]", "[SEP]", "punctuation", "other")
METRIC_NAMES = {"[CLS]": "cls", "[SEP]": "sep", "punctuation": "punct", "other": "other"}


@dataclass(frozen=True)
class MeasureComparison:
    """What `compare_measures` gives the stage to write; layers numbered from 1."""

    received: pd.DataFrame  # task, measure, layer, token_type, received, ci_low, ci_high
    examples: pd.DataFrame  # the sampled dev rows: idx, label
    metrics: dict[str, float | int]


def is_punctuation(piece: str) -> bool:
    """True for a word piece made of punctuation characters only (word marks ignored)."""
    text = piece_text(piece)
    return bool(text) and all(
        c in string.punctuation or unicodedata.category(c).startswith("P") for c in text
    )


def piece_types(input_ids: Sequence[int], tokenizer: PreTrainedTokenizerBase) -> np.ndarray:
    """The type (index into TOKEN_TYPES) of every piece of one encoded example: int [n]."""
    pieces = tokenizer.convert_ids_to_tokens(list(input_ids))
    types = [
        0 if i == tokenizer.cls_token_id
        else 1 if i == tokenizer.sep_token_id
        else 2 if is_punctuation(piece)
        else 3
        for i, piece in zip(input_ids, pieces, strict=True)
    ]  # fmt: skip
    return np.asarray(types, dtype=np.int64)


def received_shares(maps: np.ndarray, types: np.ndarray) -> np.ndarray:
    """share_t[l] of one example: maps [L, H, n, n] (>= 0), types int [n] -> [L, T]."""
    maps = maps.astype(np.float64)
    totals = maps.sum(axis=-1, keepdims=True)  # [L, H, n, 1]
    shares = np.divide(maps, totals, out=np.zeros_like(maps), where=totals > 0)  # [L, H, n, n]
    per_key = shares.mean(axis=(1, 2))  # [L, n]: averaged over heads and queries
    onehot = np.eye(len(TOKEN_TYPES))[types]  # [n, T]
    return per_key @ onehot  # [L, T]


def compare_measures(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    task: TaskConfig,
    dev: pd.DataFrame,
    settings: MeasuresConfig,
    *,
    max_length: int,
    seed: int,
) -> MeasureComparison:
    """Token-type shares per layer under each measure, for `model` (on its device) on
    `settings.num_examples` rows of `dev` drawn with `seed`."""
    sample = evaluation_sample(dev, task, settings.num_examples, seed)
    rows = labelled_rows(tokenizer, task, sample, max_length, f"{task.name} dev").rows
    captured_kinds = list(dict.fromkeys(c for m in settings.measures for c in captured_for(m)))
    attached = attach(model.eval())
    stream = stream_measures(
        attached, rows, settings.batch_size, tokenizer.pad_token_id, captured_kinds,
        desc=f"measures {task.name}",
    )  # fmt: skip
    per_example: dict[int, np.ndarray] = {}
    for index, captured in stream:
        types = piece_types(rows[index]["input_ids"], tokenizer)
        per_example[index] = np.stack(
            [received_shares(measure_maps(captured, m), types) for m in settings.measures]
        )  # [M, L, T]
    shares = np.stack([per_example[i] for i in range(len(rows))])  # [N, M, L, T]
    received = received_table(shares, settings, task.name, seed)
    return MeasureComparison(
        received=received,
        examples=sample[["idx", "label"]],
        metrics={
            **flat_metrics(received),
            **special_retained(shares, settings, seed),
            "examples": len(rows),
        },
    )


def special_retained(shares: np.ndarray, settings: MeasuresConfig, seed: int) -> dict[str, float]:
    """`special_norms_over_weights`: the share of attention [CLS] and [SEP] receive under
    norms over their share under weights (each averaged over layers and examples), with a
    paired bootstrap interval over examples; empty unless both measures were computed.
    Below 1: part of the special tokens' attention carries little (Kobayashi et al. 2020)."""
    if not {"weights", "norms"} <= set(settings.measures):
        return {}
    special = shares[..., :2].sum(axis=-1).mean(axis=-1)  # [N, M]: [CLS] + [SEP], layer mean
    on_norms = special[:, settings.measures.index("norms")]  # [N]
    on_weights = special[:, settings.measures.index("weights")]  # [N]
    interval = bootstrap_interval(
        lambda n, w: n.mean(axis=-1) / w.mean(axis=-1), on_norms, on_weights,
        n_resamples=settings.bootstrap_resamples, seed=seed, vectorized=True,
    )  # fmt: skip
    return {k: round(v, 6) for k, v in interval.as_dict("special_norms_over_weights").items()}


def received_table(
    shares: np.ndarray, settings: MeasuresConfig, task: str, seed: int
) -> pd.DataFrame:
    """Long table of the mean shares [N, M, L, T] with bootstrap intervals over examples:
    task, measure, layer (from 1), token_type, received, ci_low, ci_high."""
    count, measures, layers, types = shares.shape
    flat = shares.reshape(count, -1)  # [N, M*L*T]
    intervals = bootstrap_interval(
        lambda x: x.mean(axis=-2), flat, n_resamples=settings.bootstrap_resamples, seed=seed,
        vectorized=True,
    )  # fmt: skip
    m, layer, t = np.unravel_index(np.arange(flat.shape[1]), (measures, layers, types))
    return pd.DataFrame(
        {
            "task": task,
            "measure": np.asarray(settings.measures)[m],
            "layer": layer + 1,
            "token_type": np.asarray(TOKEN_TYPES)[t],
            "received": [i.estimate for i in intervals],
            "ci_low": [i.low for i in intervals],
            "ci_high": [i.high for i in intervals],
        }
    )


def flat_metrics(received: pd.DataFrame) -> dict[str, float]:
    """`cls.weights.L6`-style keys (layers from 1, as in the table) for every row."""
    return {
        f"{METRIC_NAMES[row.token_type]}.{row.measure}.{layer_name(row.layer - 1)}": round(
            float(row.received), 6
        )
        for row in received.itertuples()
    }
