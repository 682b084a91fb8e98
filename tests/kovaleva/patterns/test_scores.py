"""The classifier's scores from confusion matrices against sklearn's, resample by resample."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.scores import (
    confusion_scores,
    example_confusions,
    resampled_confusions,
    score_names,
)


def sklearn_scores(true: np.ndarray, predicted: np.ndarray, names: list[str]) -> np.ndarray:
    """The oracle: each score of `names` with sklearn, as the stage scored them before."""
    present = [c for c in CLASSES if c in set(true)]
    if len(set(true) | set(predicted)) < 2:
        kappa = np.nan
    else:
        kappa = cohen_kappa_score(true, predicted, labels=list(CLASSES))
    values = {
        "accuracy": np.mean(true == predicted),
        "kappa": kappa,
        "macro_f1": f1_score(true, predicted, labels=present, average="macro", zero_division=0),
    }
    for c in CLASSES:
        values[f"f1_{c}"] = f1_score(true, predicted, labels=[c], average="macro", zero_division=0)
    return np.array([values[name] for name in names])


@pytest.mark.parametrize("agreement", [0.0, 0.6, 1.0])
def test_every_resample_scores_as_sklearn_bit_for_bit(agreement):
    rng = np.random.default_rng(7)
    maps, examples = 300, 60
    # a rare class, as block is: some resamples miss it among the labels or the predictions
    true = rng.choice(CLASSES, maps, p=[0.45, 0.2, 0.2, 0.02, 0.13])
    predicted = np.where(rng.random(maps) < agreement, true, rng.choice(CLASSES, maps))
    groups = rng.integers(0, examples, maps)
    groups = np.unique(groups, return_inverse=True)[1]  # codes 0..G-1
    names = score_names(true)
    confusions = example_confusions(true, predicted, groups)  # [G, C, C]
    picked = rng.integers(0, groups.max() + 1, (2, 50, groups.max() + 1))  # [2, 50, G]
    got = confusion_scores(resampled_confusions(confusions, picked), names)  # [2, 50, K]
    assert got.shape == (2, 50, len(names))
    for b in range(2):
        for r in range(50):
            rows = np.concatenate([np.flatnonzero(groups == g) for g in picked[b, r]])
            want = sklearn_scores(true[rows], predicted[rows], names)
            np.testing.assert_array_equal(got[b, r], want)


def test_edge_cases_follow_sklearn():
    names = ["accuracy", "kappa", "macro_f1", *[f"f1_{c}" for c in CLASSES]]
    one_class = np.array(["vertical"] * 4)
    cases = [
        (one_class, one_class),  # a single class on both sides: kappa undefined
        (one_class, np.array(["diagonal"] * 4)),  # all wrong
        (np.array(["vertical", "block"]), np.array(["block", "vertical"])),
    ]
    for true, predicted in cases:
        confusion = example_confusions(true, predicted, np.zeros(len(true), dtype=int))[0]
        np.testing.assert_array_equal(
            confusion_scores(confusion, names), sklearn_scores(true, predicted, names)
        )
    alone = example_confusions(one_class, one_class, np.zeros(len(one_class), dtype=int))[0]
    assert np.isnan(confusion_scores(alone, ["kappa"])[0])


def test_only_classes_among_the_labels_get_an_f1():
    assert score_names(np.array(["vertical", "diagonal"])) == [
        "accuracy",
        "kappa",
        "macro_f1",
        "f1_vertical",
        "f1_diagonal",
    ]
