"""The pattern CNN's design study (benchmarks/pattern_design.py and its second round,
pattern_design_seeds.py): its scores, averaged over fold seeds, its selection rule, and the
benchmarks page showing both rounds' kept records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, recall_score

from benchmarks.pattern_design import design_table, passes_rule, score_rows
from benchmarks.pattern_design_seeds import seeds_table
from tests.support.paths import REPO

CLASSES = ["vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"]


def labels(seed: int, n: int = 120) -> np.ndarray:
    return np.random.default_rng(seed).choice(CLASSES, size=n, p=[0.4, 0.2, 0.2, 0.05, 0.15])


def test_scores_match_sklearn_and_the_difference_is_paired() -> None:
    true, mine, base = labels(0), labels(1), labels(2)
    mine[:60] = true[:60]  # better than chance
    groups = np.repeat(np.arange(40), 3)
    rows = {r[0]: r for r in score_rows(true, [mine], [base], groups, resamples=200)}
    assert rows["accuracy"][1] == pytest.approx(accuracy_score(true, mine))
    assert rows["kappa"][1] == pytest.approx(cohen_kappa_score(true, mine))
    f1 = f1_score(true, mine, labels=["vertical"], average=None)[0]
    assert rows["f1_vertical"][1] == pytest.approx(f1)
    for c in CLASSES:
        expected = recall_score(true, mine, labels=[c], average=None)[0]
        assert rows[f"recall_{c}"][1] == pytest.approx(expected)
    gap = accuracy_score(true, mine) - accuracy_score(true, base)
    assert rows["accuracy"][4] == pytest.approx(gap)
    same = {r[0]: r for r in score_rows(true, [mine], [mine], groups, resamples=200)}
    assert all(r[4:] == (0.0, 0.0, 0.0) for r in same.values())  # against itself: exactly 0


def test_over_several_fold_seeds_each_score_is_the_mean_of_the_seeds_scores() -> None:
    true, base = labels(0), labels(2)
    seeds = [labels(3), labels(4), labels(5)]
    for predicted in seeds:
        predicted[:50] = true[:50]
    groups = np.repeat(np.arange(40), 3)
    rows = {r[0]: r for r in score_rows(true, seeds, [base] * 3, groups, resamples=200)}
    mean = np.mean([accuracy_score(true, p) for p in seeds])
    assert rows["accuracy"][1] == pytest.approx(mean)
    assert rows["accuracy"][4] == pytest.approx(mean - accuracy_score(true, base))
    kappa = np.mean([cohen_kappa_score(true, p) for p in seeds])
    assert rows["kappa"][1] == pytest.approx(kappa)
    assert rows["accuracy"][2] < mean < rows["accuracy"][3]


def rule_table(low: float, vd: float, f1: float) -> pd.DataFrame:
    """One candidate whose minilm_l6 rows carry the given accuracy lower bound, V+D recall
    difference and vertical F1 difference; mpnet_base's pass."""
    rows = []
    for subset in ("minilm_l6", "mpnet_base"):
        mine = subset == "minilm_l6"
        for score, diff, diff_low in [
            ("accuracy", 0.0, low if mine else 0.0),
            ("kappa", 0.0, 0.0),
            ("recall_vertical+diagonal", vd if mine else 0.1, 0.0),
            ("f1_vertical", f1 if mine else 0.0, 0.0),
        ]:
            rows.append(("c", 4, subset, score, 0.5, 0.4, 0.6, diff, diff_low, 0.1))
    columns = ["candidate", "cv_ensemble", "subset", "score", "estimate", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=[*columns, "diff", "diff_low", "diff_high"])


@pytest.mark.parametrize(
    ("low", "vd", "f1", "passes"),
    [
        (-0.02, 0.01, 0.0, True),
        (-0.021, 0.01, 0.0, False),  # accuracy may fall by more than 0.02
        (0.0, 0.0, 0.0, False),  # V+D recall not higher
        (0.0, 0.01, -0.001, False),  # vertical's F1 falls
    ],
)
def test_the_rule_needs_every_condition_on_every_model(low, vd, f1, passes) -> None:
    assert passes_rule(rule_table(low, vd, f1), ("minilm_l6", "mpnet_base"))[("c", 4)] == passes


def test_the_benchmarks_page_shows_the_design_records_of_both_rounds() -> None:
    page = (REPO / "docs/benchmarks.md").read_text()
    assert design_table() in page
    assert seeds_table() in page
