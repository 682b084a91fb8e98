"""The maps of Fig. 1: for each type, a typical labelled map that the classifier also gets."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.mapsets import LabelledMap

FIG1_MAX_TOKENS = 40  # Fig. 1 prefers maps short enough to read every word piece


def pick_examples(
    out_of_fold: pd.DataFrame, maps: Mapping[str, LabelledMap], max_tokens: int = FIG1_MAX_TOKENS
) -> pd.DataFrame:
    """One labelled map per type for Fig. 1: among the maps whose visual label (agreed by all
    its annotators where possible) the cross-validated classifier predicts, the most
    confident one no longer than `max_tokens` word pieces where there is such a map.

    out_of_fold: map_id, visual, cnn, confidence[, agreed] (see fit.TrainedClassifier)."""
    table = out_of_fold.assign(length=[len(maps[m].tokens) for m in out_of_fold["map_id"]])
    chosen = []
    for name in CLASSES:
        pool = table[(table["visual"] == name) & (table["cnn"] == name)]
        if "agreed" in pool and pool["agreed"].any():
            pool = pool[pool["agreed"]]
        if (pool["length"] <= max_tokens).any():
            pool = pool[pool["length"] <= max_tokens]
        if len(pool):
            chosen.append(pool.loc[pool["confidence"].idxmax()])
    return pd.DataFrame(chosen).reset_index(drop=True)
