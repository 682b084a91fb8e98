"""The fold-classifier study (benchmarks/pattern_fold_classifier.py): the folds' networks split
into two halves by seed, its rule, and the benchmarks page showing its kept record."""

from __future__ import annotations

import re

import pandas as pd

from benchmarks.pattern_fold_classifier import (
    FINAL_FITS,
    FROM_FOLDS,
    PER_FOLD,
    fold_classifier_table,
    halves,
    passes,
)
from tests.support.paths import REPO


def test_each_folds_networks_split_by_seed_into_two_halves() -> None:
    networks = [f"fold{f} seed{s}" for f in range(3) for s in range(PER_FOLD)]  # fold-major
    first, second = halves(networks, folds=3)
    assert first == [f"fold{f} seed{s}" for f in range(3) for s in range(PER_FOLD // 2)]
    assert second == [f"fold{f} seed{s}" for f in range(3) for s in range(PER_FOLD // 2, PER_FOLD)]


def rule_rows(model: str, acc_low: float, kappa_low: float, vd: float, f1: float) -> list:
    cells = {"accuracy": (0, acc_low), "kappa": (0, kappa_low)}
    cells |= {"recall_vertical+diagonal": (vd, -1.0), "f1_vertical": (f1, -1.0)}
    return [(FROM_FOLDS, model, score, d, low) for score, (d, low) in cells.items()] + [
        (FINAL_FITS, model, "accuracy", 0.0, -1.0)  # the baseline's own rows are not judged
    ]


def test_the_rule_needs_both_bounds_and_both_recalls_on_every_model() -> None:
    columns = ["arm", "subset", "score", "diff", "diff_low"]
    good = rule_rows("a", -0.02, -0.019, -0.02, 0.0)
    assert passes(pd.DataFrame(good, columns=columns)) == {"a": True}
    for bad in [
        rule_rows("b", -0.021, 0.0, 0.0, 0.0),
        rule_rows("b", 0.0, -0.021, 0.0, 0.0),
        rule_rows("b", 0.0, 0.0, -0.021, 0.0),
        rule_rows("b", 0.0, 0.0, 0.0, -0.021),
    ]:
        assert passes(pd.DataFrame(good + bad, columns=columns)) == {"a": True, "b": False}


def test_the_benchmarks_page_shows_the_studys_record() -> None:
    assert fold_classifier_table() in (REPO / "docs/benchmarks.md").read_text()


def test_the_pages_prose_quotes_the_record_it_shows() -> None:
    page = (REPO / "docs/benchmarks.md").read_text()
    start = page.index("<!-- /pattern-fold-classifier-table -->")
    prose = page[start : page.index("With this, three studies", start)]
    quoted = re.findall(r"[+-]?\d\.\d{3}", prose)
    assert len(quoted) >= 20
    shown = set(re.findall(r"[+-]?\d\.\d{3}", fold_classifier_table()))  # signed as shown
    missing = [n for n in quoted if n not in shown]
    assert not missing, f"the prose quotes numbers its record does not hold: {missing}"
