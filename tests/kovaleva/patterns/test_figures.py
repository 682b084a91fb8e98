"""Fig. 2 draws the shares the claims judge: the ones estimated from the share round where
there are any, the classifier's otherwise, each with the caption that says which."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.figures import (
    ESTIMATED_CAPTION,
    SHARES_CAPTION,
    pattern_shares_figure,
)


def _table(column: str, shares: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {"task": "mrpc", "variant": "finetuned", column: list(CLASSES), "share": shares,
         "ci_low": [s - 0.01 for s in shares], "ci_high": [s + 0.01 for s in shares]}
    )  # fmt: skip


def _heights(figure) -> list[float]:
    return [bar.get_height() for bar in figure.axes[0].patches]


@pytest.fixture
def classified() -> pd.DataFrame:
    return _table("class", [0.5, 0.1, 0.1, 0.1, 0.2])


def test_the_estimated_shares_are_drawn_where_there_are_any(classified):
    estimated = pd.concat(
        [_table("type", [0.6, 0.05, 0.15, 0.0, 0.2]),
         _table("type", [0.8] * 5).iloc[:1].assign(type="first_three")]
    )  # fmt: skip
    drawn = pattern_shares_figure(classified, estimated)
    assert drawn.caption == ESTIMATED_CAPTION
    assert _heights(drawn.figure) == pytest.approx([0.6, 0.05, 0.15, 0.0, 0.2])
    plt.close(drawn.figure)


def test_the_classifiers_shares_are_drawn_without_a_share_round(classified):
    drawn = pattern_shares_figure(classified, classified.iloc[:0].rename(columns={"class": "type"}))
    assert drawn.caption == SHARES_CAPTION
    assert _heights(drawn.figure) == pytest.approx([0.5, 0.1, 0.1, 0.1, 0.2])
    plt.close(drawn.figure)
