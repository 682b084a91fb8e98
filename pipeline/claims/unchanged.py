"""Intervals of zero width: no prediction changed.

A paired bootstrap interval of a metric's change is [0, 0] when removing a head (or pruning)
changed no prediction on the sampled rows: every resample sees no change. That says nothing
about rows not sampled. With 0 of n rows changed, the Clopper-Pearson 95% upper bound on the
share of rows whose prediction changes is 1 - 0.025^(1/n) (0.038 for 96 rows), and an
accuracy cannot move by more than that share; this module puts that bound in place of the
zero width (for F1 or a correlation it is a reading in rows, not an exact bound).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.claims.thresholds import CONFIDENCE


def changed_share_bound(rows: float) -> float:
    """The 95% upper bound on the share of rows that change, when none of `rows` did."""
    return float(1 - ((1 - CONFIDENCE) / 2) ** (1 / rows))


def widen_unchanged(
    table: pd.DataFrame, rows: float, low: str = "ci_low", high: str = "ci_high"
) -> tuple[pd.DataFrame, int]:
    """`table` with every zero-width interval replaced by its delta -+ the bound above, and
    how many rows of `table` had one."""
    widened = table.astype({low: float, high: float})  # a CSV of whole zeros reads as int
    zero = np.isclose(widened[low], widened[high])  # [units]
    bound = changed_share_bound(rows)
    widened.loc[zero, low] -= bound
    widened.loc[zero, high] += bound
    return widened, int(zero.sum())


def unchanged_note(count: int, units: int, what: str, rows: float) -> str:
    """The sentence the claims table shows when some intervals were widened."""
    if not count:
        return ""
    return (
        f"{count} of {units} {what} changed no prediction on the {rows:.0f} rows; their "
        f"intervals are the Clopper-Pearson bound +-{changed_share_bound(rows):.3f}"
    )
