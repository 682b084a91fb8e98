"""How well two sets of labels of the same maps agree: raw agreement and Cohen's kappa.

Used for the annotators against each other (`annotator_agreement`) and for the classifier and
the rule against the resolved visual labels (`fit`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.labels import primary_annotator


def raw_agreement(first: Sequence[str], second: Sequence[str]) -> float:
    """The share of maps given the same label."""
    return float(np.mean(np.asarray(first) == np.asarray(second)))


def kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's kappa over the five classes (1: perfect, 0: what chance gives)."""
    if len(set(first) | set(second)) < 2:  # one class on both sides: kappa is undefined
        return float("nan")
    return float(cohen_kappa_score(first, second, labels=list(CLASSES)))


def paired_labels(labels: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """map_id, first, second: the maps both annotators labelled (their latest labels)."""
    latest = labels.drop_duplicates(["map_id", "annotator"], keep="last")
    a = latest[latest["annotator"] == first].set_index("map_id")["label"]
    b = latest[latest["annotator"] == second].set_index("map_id")["label"]
    both = a.index.intersection(b.index)
    return pd.DataFrame({"map_id": both, "first": a[both].values, "second": b[both].values})


def annotator_agreement(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per pair (primary annotator, other annotator) that share maps, plus a pooled
    row (`other` = 'any'): maps, raw agreement and kappa.

    labels: every label (columns map_id, label, annotator), see `labels.read_labels`."""
    primary = primary_annotator(labels)
    others = [a for a in dict.fromkeys(labels["annotator"]) if a != primary]
    rows, pooled = [], []
    for other in others:
        pairs = paired_labels(labels, primary, other)
        if pairs.empty:
            continue
        pooled.append(pairs)
        rows.append((primary, other, len(pairs), *_scores(pairs)))
    if pooled:
        everything = pd.concat(pooled, ignore_index=True)
        rows.append((primary, "any", len(everything), *_scores(everything)))
    return pd.DataFrame(rows, columns=["primary", "other", "pairs", "agreement", "kappa"])


def _scores(pairs: pd.DataFrame) -> tuple[float, float]:
    return raw_agreement(pairs["first"], pairs["second"]), kappa(pairs["first"], pairs["second"])
