"""What the framenet stage writes that others read: every head's FrameNet score with its
95% interval (plots/framenet/heads.csv, one row per head)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.core.results import Covers, Table


@dataclass(frozen=True, eq=False)
class FramenetHeads(Table):
    stage = "framenet"
    covers = Covers.RUN
    name = "heads"

    score: pd.Series
    score_ci_low: pd.Series
    score_ci_high: pd.Series
