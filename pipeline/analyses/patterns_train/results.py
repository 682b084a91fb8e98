"""What the patterns_train stage writes that others read: the classifier's cross-validated
prediction of every map labelled by eye (plots/patterns_train/cross_validation.csv)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.core.results import Covers, Table


@dataclass(frozen=True, eq=False)
class CrossValidation(Table):
    stage = "patterns_train"
    covers = Covers.RUN
    name = "cross_validation"

    map_id: pd.Series
    task: pd.Series
    variant: pd.Series  # finetuned or pretrained
    round: pd.Series  # the labelling round the map was drawn in
    rule: pd.Series  # the threshold rule's class of the map (its stratum)
    example_id: pd.Series  # the input example the map comes from
    visual: pd.Series  # the type labelled by eye
    cnn: pd.Series  # the type the classifier called it, in cross-validation
    labels_from: pd.Series | None = None  # the label folder (kept runs of one folder lack it)
