"""Where heads attend (Clark et al. 2019, Sec. 3): special tokens, punctuation, neighbours.

For one example with n tokens and a head's map A [n, n] (rows: queries), the average
attention to a target is the attention mass on the target's keys, summed over the queries
and divided by the number of queries:

    cls      Σ_i A[i, [CLS]] / n              self      Σ_i A[i, i] / n
    sep      Σ_i Σ_s A[i, s] / n              previous  Σ_i A[i, i - 1] / n
    punct    Σ_i Σ_p A[i, p] / n              next      Σ_i A[i, i + 1] / n
    sep->sep   Σ over [SEP] queries of A[q, s] / #[SEP]
    other->sep Σ over other queries of A[q, s] / (n - #[SEP])

with s the [SEP] positions and p the "." and "," positions (a piece's word mark, such as
RoBERTa's "Ġ" or ALBERT's "▁", ignored). The values are averaged over examples. [CLS] is the
first special token, [SEP] every later one (read from word ids, so other models' special
tokens work too).

Each layer's attention to [SEP] (its heads' mean `sep`, averaged over examples) also gets a
95% interval bootstrapped over the examples (`by_layer`): Clark et al. find over half
of the attention of the middle layers going to [SEP] (Sec. 3, Fig. 2). The middle layers of
a model of any depth stand where layers 6-10 of bert-base's 12 do (`middle_layers`); over
them, per example, the heads' mean attention to [SEP] and to the sink tokens ([CLS], [SEP]
and punctuation together: `SINKS`, where Clark et al. find most of the middle layers'
attention going), each with its interval over examples (`middle_mean`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.attention.pieces import piece_text
from pipeline.core.stats import Interval, bootstrap_interval

TARGETS = ("cls", "sep", "punct", "self", "previous", "next", "sep->sep", "other->sep")
SINKS = ("cls", "sep", "punct")  # disjoint targets: their sum is the attention to any of them
PAPER_MIDDLE = (6, 10)  # Clark et al.'s middle layers, counted from 1 ...
PAPER_DEPTH = 12  # ... of bert-base's 12


def middle_layers(depth: int) -> range:
    """The layers (from 1) of a `depth`-layer model that stand where layers 6-10 of
    bert-base's 12 do: each end scaled by depth / 12 and rounded, at least layer 1
    (6 layers: 3-5; 24 layers: 12-20)."""
    first, last = (max(1, round(n * depth / PAPER_DEPTH)) for n in PAPER_MIDDLE)
    return range(first, last + 1)


def target_masks(
    tokens: Sequence[str], word_ids: Sequence[int], punctuation: Sequence[str]
) -> dict[str, tuple[np.ndarray, int]]:
    """Per target: (bool mask [n, n] of the (query, key) cells it covers, number of queries)."""
    n = len(tokens)
    special = np.asarray(word_ids) < 0  # [n]
    cls = np.zeros(n, dtype=bool)
    cls[np.flatnonzero(special)[:1]] = True
    sep = special & ~cls
    texts = np.asarray([piece_text(t) for t in tokens], dtype=object)  # word marks dropped
    punct = np.isin(texts, list(punctuation)) & ~special
    every_query = np.ones(n, dtype=bool)
    return {
        "cls": (every_query[:, None] & cls[None], n),
        "sep": (every_query[:, None] & sep[None], n),
        "punct": (every_query[:, None] & punct[None], n),
        "self": (np.eye(n, dtype=bool), n),
        "previous": (np.eye(n, k=-1, dtype=bool), n),
        "next": (np.eye(n, k=1, dtype=bool), n),
        "sep->sep": (sep[:, None] & sep[None], int(sep.sum())),
        "other->sep": (~sep[:, None] & sep[None], int(n - sep.sum())),
    }


class TargetAttention:
    """Running mean over examples of each head's average attention to each target."""

    def __init__(self, num_layers: int, num_heads: int, punctuation: Sequence[str]) -> None:
        self.punctuation = tuple(punctuation)
        self.sums = np.zeros((len(TARGETS), num_layers, num_heads))
        self.examples = np.zeros(len(TARGETS), dtype=np.int64)
        self.sep_layers: list[np.ndarray] = []  # per example with a [SEP]: [L], heads' mean
        self.sink_layers: list[np.ndarray] = []  # the same examples: [L], to any of SINKS

    def add(self, maps: np.ndarray, tokens: Sequence[str], word_ids: Sequence[int]) -> None:
        """One example: maps float [L, H, n, n]."""
        masks = target_masks(tokens, word_ids, self.punctuation)
        averages = {}
        for t, target in enumerate(TARGETS):
            mask, queries = masks[target]
            if queries == 0:
                continue  # e.g. sep->sep in a model without [SEP]
            averages[target] = (maps * mask).sum((-2, -1)) / queries  # [L, H]
            self.sums[t] += averages[target]
            self.examples[t] += 1
        if masks["sep"][0].any():
            self.sep_layers.append(averages["sep"].mean(-1))
            self.sink_layers.append(sum(averages[target] for target in SINKS).mean(-1))

    def _rows(self, target: str) -> np.ndarray:
        """Per example that has a [SEP], each layer's heads' mean attention to `target`
        (`sep`, or `sink`: any of SINKS): [E, L]."""
        return np.stack({"sep": self.sep_layers, "sink": self.sink_layers}[target])

    def by_layer(self, target: str, resamples: int, seed: int) -> list[Interval]:
        """Each layer's attention to `target` (`sep`, or `sink`: any of SINKS; its heads'
        mean, averaged over the examples that have a [SEP]) with its 95% interval
        bootstrapped over those examples; one Interval per layer, first layer first. Needs
        two or more such examples."""
        per_example = self._rows(target)  # [E, L]
        return bootstrap_interval(
            lambda rows: rows.mean(axis=-2),  # [..., E, L] -> [..., L]
            per_example,
            n_resamples=resamples,
            seed=seed,
            vectorized=True,
        )

    def middle_mean(self, target: str, resamples: int, seed: int) -> Interval:
        """The middle layers' (`middle_layers`) attention to `target` (`sep`, or `sink`: any
        of SINKS): per example that has a [SEP], the mean over those layers of their heads'
        mean, averaged over the examples, with its 95% interval bootstrapped over them. Needs
        two or more such examples."""
        per_example = self._rows(target)  # [E, L]
        middle = [n - 1 for n in middle_layers(per_example.shape[1])]  # 0-based
        return bootstrap_interval(
            lambda means: means.mean(axis=-1),  # [..., E] -> [...]
            per_example[:, middle].mean(axis=1),  # [E]
            n_resamples=resamples,
            seed=seed,
            vectorized=True,
        )

    def table(self) -> pd.DataFrame:
        """Long table: layer, head, target, attention (0-based layers and heads)."""
        means = self.sums / self.examples.clip(min=1)[:, None, None]  # [T, L, H]
        t, layer, head = np.indices(means.shape).reshape(3, -1)
        return pd.DataFrame(
            {
                "layer": layer,
                "head": head,
                "target": np.asarray(TARGETS)[t],
                "attention": means.reshape(-1),
            }
        )
