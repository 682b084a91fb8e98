"""Dependency-relation heads (Clark et al. 2019, Sec. 4.2).

A head "predicts" the syntactic head of each dependent as the word it attends to most. In
the direction `dep->head` the dependent's own row is read (argmax_i A[j, i]); in the
direction `head->dep` the dependent's column is (argmax_i A[i, j]: the word that attends
most to it). Attention to the word itself and to [CLS]/[SEP] is ignored, and root arcs are
left out (their head is no word). Relations keep their UD subtypes (`aux:pass` is not
`aux`), and Clark et al.'s `prep` and `pobj`, which UD reverses, are rebuilt from `case`
(pipeline.clark.ud). A relation's best head is chosen on one split and its
accuracy reported on another, against the best fixed-offset baseline (the head is always
`offset` words from the dependent) chosen the same way. Outcomes are kept per arc and
sentence, so the report split's accuracies can be bootstrapped over sentences (arcs of one
sentence stay together) with the head and the offset paired on the same arcs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.clark.ud import REBUILT, Sentence

if TYPE_CHECKING:
    import torch

DIRECTIONS = ("dep->head", "head->dep")
ALL = "all relations"


def predict_heads(maps: torch.Tensor) -> np.ndarray:
    """Word maps [L, H, w + 2, w + 2] -> predicted 1-based heads int [2, L, H, w] per direction."""
    words = maps[..., 1:-1, 1:-1].clone()  # [L, H, w, w]: [CLS] and [SEP] dropped
    words.diagonal(dim1=-2, dim2=-1).fill_(-1.0)  # a word is never its own head
    from_dependent = words.argmax(-1)  # [L, H, w]: the word each dependent attends to most
    to_dependent = words.argmax(-2)  # [L, H, w]: the word that attends most to each dependent
    return np.stack([from_dependent.numpy(), to_dependent.numpy()]) + 1


def offset_heads(length: int, offsets: Sequence[int]) -> np.ndarray:
    """Predicted 1-based heads int [O, w] of the fixed-offset baselines (0 = out of range)."""
    positions = np.arange(1, length + 1)[None] + np.asarray(offsets)[:, None]  # [O, w]
    return np.where((positions >= 1) & (positions <= length), positions, 0)


@dataclass
class ArcOutcomes:
    """Whether every head (both directions) and every offset finds the gold head of each arc,
    kept per arc with its sentence so that sentences can be resampled."""

    relations: list[str]
    offsets: list[int]
    num_layers: int
    num_heads: int

    def __post_init__(self) -> None:
        self.index = {name: i for i, name in enumerate(self.relations)}
        # [R]: UD's own arcs, one per word, make up ALL; the rebuilt ones would count twice
        self.in_all = np.array([name not in REBUILT for name in self.relations], dtype=bool)
        self.sentences = 0  # sentences added, with or without arcs
        self._rows: list[tuple[np.ndarray, ...]] = []  # per sentence: sentence, relation, hits

    def add(self, sentence: Sentence, maps: torch.Tensor) -> None:
        """Score one sentence's arcs (`Sentence.arcs`: UD's and the rebuilt `prep`/`pobj`)
        given its word maps [L, H, w + 2, w + 2]."""
        arcs = [arc for arc in sentence.arcs if arc.relation in self.index]
        number, self.sentences = self.sentences, self.sentences + 1
        if not arcs:
            return
        dependents = [arc.dependent for arc in arcs]  # a word may be the dependent of 2 arcs
        gold = np.asarray([arc.head for arc in arcs])  # [a]
        relation = np.asarray([self.index[arc.relation] for arc in arcs])  # [a]
        heads = predict_heads(maps)[..., dependents] == gold  # [2, L, H, a]
        offsets = offset_heads(len(sentence), self.offsets)[:, dependents] == gold  # [O, a]
        self._rows.append(
            (np.full(len(arcs), number), relation, np.moveaxis(heads, -1, 0), offsets.T)
        )

    def arcs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every arc: sentence int [A], relation int [A], head hits bool [A, 2, L, H] and
        offset hits bool [A, O]."""
        if not self._rows:
            shape = (2, self.num_layers, self.num_heads)
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros((0, *shape), bool), np.zeros((0, len(self.offsets)), bool)
        return tuple(np.concatenate(column) for column in zip(*self._rows, strict=True))

    @property
    def total(self) -> np.ndarray:
        """Arcs per relation: int [R] (ALL's count is `total[in_all].sum()`)."""
        return np.bincount(self.arcs()[1], minlength=len(self.relations))

    def accuracy(self) -> tuple[np.ndarray, np.ndarray]:
        """Accuracies per relation, with an ALL row (UD's arcs) last: heads [R+1, 2, L, H],
        offsets [R+1, O]."""
        _, relation, head_hits, offset_hits = self.arcs()
        r = len(self.relations)
        heads = np.zeros((r, *head_hits.shape[1:]))
        offset = np.zeros((r, offset_hits.shape[1]))
        np.add.at(heads, relation, head_hits)
        np.add.at(offset, relation, offset_hits)
        heads = np.concatenate([heads, heads[self.in_all].sum(0, keepdims=True)])
        offset = np.concatenate([offset, offset[self.in_all].sum(0, keepdims=True)])
        total = np.append(self.total, self.total[self.in_all].sum()).clip(min=1)
        return heads / total[:, None, None, None], offset / total[:, None]


def select_and_report(select: ArcOutcomes, report: ArcOutcomes, min_count: int) -> pd.DataFrame:
    """Per relation (and ALL): the best head and offset chosen on `select`, scored on `report`.

    Relations with fewer than `min_count` arcs in either split are left out of the table
    (they still count in the ALL row).
    """
    sel_heads, sel_offset = select.accuracy()
    rep_heads, rep_offset = report.accuracy()
    counts = np.append(report.total, report.total[report.in_all].sum())
    chosen_counts = np.append(select.total, select.total[select.in_all].sum())
    rows = []
    for r, name in enumerate([*report.relations, ALL]):
        if name != ALL and min(counts[r], chosen_counts[r]) < min_count:
            continue
        direction, layer, head = np.unravel_index(sel_heads[r].argmax(), sel_heads[r].shape)
        best_offset = int(sel_offset[r].argmax())
        rows.append(
            {
                "relation": name,
                "count": int(counts[r]),
                "select_count": int(chosen_counts[r]),
                "direction": DIRECTIONS[direction],
                "layer": int(layer),
                "head": int(head),
                "head_accuracy": float(rep_heads[r, direction, layer, head]),
                "head_select_accuracy": float(sel_heads[r, direction, layer, head]),
                "offset": int(report.offsets[best_offset]),
                "offset_accuracy": float(rep_offset[r, best_offset]),
            }
        )
    table = pd.DataFrame(rows)
    order = table["relation"].eq(ALL)
    return pd.concat([table[~order].sort_values("count", ascending=False), table[order]])


def hits_per_sentence(table: pd.DataFrame, report: ArcOutcomes) -> tuple[np.ndarray, ...]:
    """For each row of `table` (a relation, or ALL, with its chosen head and offset), per
    report sentence: arcs, hits of the chosen head and hits of the chosen offset, each
    int [S, T] for S sentences and T rows."""
    sentence, relation, head_hits, offset_hits = report.arcs()
    shape = (report.sentences, len(table))
    arcs, heads, offsets = np.zeros(shape, int), np.zeros(shape, int), np.zeros(shape, int)
    for t, row in enumerate(table.itertuples()):
        if row.relation == ALL:
            mine = report.in_all[relation]
        else:
            mine = relation == report.index[row.relation]
        direction = DIRECTIONS.index(row.direction)
        np.add.at(arcs[:, t], sentence[mine], 1)
        np.add.at(heads[:, t], sentence[mine], head_hits[mine, direction, row.layer, row.head])
        column = report.offsets.index(row.offset)
        np.add.at(offsets[:, t], sentence[mine], offset_hits[mine, column])
    return arcs, heads, offsets
