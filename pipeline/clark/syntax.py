"""Dependency-relation heads (Clark et al. 2019, Sec. 4.2).

A head "predicts" the syntactic head of each dependent as the word it attends to most. In
the direction `dep->head` the dependent's own row is read (argmax_i A[j, i]); in the
direction `head->dep` the dependent's column is (argmax_i A[i, j]: the word that attends
most to it). Attention to the word itself and to [CLS]/[SEP] is ignored, and root arcs are
left out (their head is no word). A relation's best head is chosen on one split and its
accuracy reported on another, against the best fixed-offset baseline (the head is always
`offset` words from the dependent) chosen the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from pipeline.clark.ud import Sentence

DIRECTIONS = ("dep->head", "head->dep")
ALL = "all relations"


def predict_heads(maps: torch.Tensor) -> np.ndarray:
    """Word maps [L, H, w + 2, w + 2] -> predicted 1-based heads int [2, L, H, w] per direction."""
    words = maps[..., 1:-1, 1:-1].clone()  # [L, H, w, w]: [CLS] and [SEP] dropped
    words.diagonal(dim1=-2, dim2=-1).fill_(-1.0)  # a word is never its own head
    from_dependent = words.argmax(-1)  # [L, H, w]: the word each dependent attends to most
    to_dependent = words.argmax(-2)  # [L, H, w]: the word that attends most to each dependent
    return torch.stack([from_dependent, to_dependent]).numpy() + 1


def offset_heads(length: int, offsets: Sequence[int]) -> np.ndarray:
    """Predicted 1-based heads int [O, w] of the fixed-offset baselines (0 = out of range)."""
    positions = np.arange(1, length + 1)[None] + np.asarray(offsets)[:, None]  # [O, w]
    return np.where((positions >= 1) & (positions <= length), positions, 0)


@dataclass
class HeadCounts:
    """Correct predictions per relation, for every head in both directions and every offset."""

    relations: list[str]
    offsets: list[int]
    num_layers: int
    num_heads: int

    def __post_init__(self) -> None:
        r, o = len(self.relations), len(self.offsets)
        self.index = {name: i for i, name in enumerate(self.relations)}
        self.heads = np.zeros((r, 2, self.num_layers, self.num_heads), dtype=np.int64)
        self.offset = np.zeros((r, o), dtype=np.int64)
        self.total = np.zeros(r, dtype=np.int64)

    def add(self, sentence: Sentence, maps: torch.Tensor) -> None:
        """Count one sentence given its word maps [L, H, w + 2, w + 2]."""
        arcs = [
            j
            for j, (head, relation) in enumerate(
                zip(sentence.heads, sentence.relations, strict=True)
            )
            if head != 0 and relation in self.index
        ]
        if not arcs:
            return
        gold = np.asarray(sentence.heads)[arcs]  # [a]
        rel = np.asarray([self.index[sentence.relations[j]] for j in arcs])  # [a]
        heads = predict_heads(maps)[..., arcs] == gold  # [2, L, H, a]
        offsets = offset_heads(len(sentence), self.offsets)[:, arcs] == gold  # [O, a]
        np.add.at(self.heads, rel, np.moveaxis(heads, -1, 0))
        np.add.at(self.offset, rel, offsets.T)
        np.add.at(self.total, rel, 1)

    def accuracy(self) -> tuple[np.ndarray, np.ndarray]:
        """Accuracies per relation, with an ALL row last: heads [R+1, 2, L, H], offsets [R+1, O]."""
        heads = np.concatenate([self.heads, self.heads.sum(0, keepdims=True)])
        offset = np.concatenate([self.offset, self.offset.sum(0, keepdims=True)])
        total = np.append(self.total, self.total.sum()).clip(min=1)
        return heads / total[:, None, None, None], offset / total[:, None]


def select_and_report(select: HeadCounts, report: HeadCounts, min_count: int) -> pd.DataFrame:
    """Per relation (and ALL): the best head and offset chosen on `select`, scored on `report`.

    Relations with fewer than `min_count` arcs in either split are left out of the table
    (they still count in the ALL row).
    """
    sel_heads, sel_offset = select.accuracy()
    rep_heads, rep_offset = report.accuracy()
    counts = np.append(report.total, report.total.sum())
    chosen_counts = np.append(select.total, select.total.sum())
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
