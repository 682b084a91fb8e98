"""A classifier's scores against the visual labels, from confusion matrices, for thousands
of bootstrap resamples at once.

A resample of input examples (the maps of one example stay together) is a count of how often
each example was drawn; its confusion matrix is those counts times the examples' own
confusion matrices. Every score is a function of that matrix, with sklearn's formulas and
edge cases (tests/kovaleva/patterns/test_scores.py holds each equal to sklearn's):

    accuracy  = trace / maps
    kappa     = 1 - observed / expected disagreement (Cohen; NaN when the labels and the
                predictions together show a single class)
    f1_<c>    = 2 tp / (maps labelled c + maps called c), 0 when both are 0
    macro_f1  = the mean of f1_<c> over the classes present among the labels
"""

from __future__ import annotations

import numpy as np

from pipeline.kovaleva.patterns import CLASSES


def example_confusions(true: np.ndarray, predicted: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """int [G, C, C]: per input example (`groups` codes 0..G-1 [N]), the count of maps with
    visual label i (CLASSES order) that were called j."""
    index = {name: i for i, name in enumerate(CLASSES)}
    t = np.array([index[c] for c in true], dtype=np.int64)  # [N]
    p = np.array([index[c] for c in predicted], dtype=np.int64)  # [N]
    groups, size = np.asarray(groups), len(CLASSES)
    cells = (groups * size + t) * size + p  # [N]: one cell of one example's matrix
    return np.bincount(cells, minlength=(groups.max() + 1) * size * size).reshape(-1, size, size)


def resampled_confusions(confusions: np.ndarray, picked: np.ndarray) -> np.ndarray:
    """Example confusions int [G, C, C] and drawn examples int [..., n] (indices into G) ->
    each resample's confusion matrix int [..., C, C]."""
    g, size = confusions.shape[0], confusions.shape[-1]
    batch = picked.reshape(-1, picked.shape[-1])  # [B, n]
    offsets = np.arange(len(batch))[:, None] * g
    drawn = np.bincount((batch + offsets).ravel(), minlength=len(batch) * g).reshape(-1, g)
    return (drawn @ confusions.reshape(g, -1)).reshape(*picked.shape[:-1], size, size)


def score_names(true: np.ndarray) -> list[str]:
    """The scores `confusion_scores` returns, in order: F1 only for classes among `true`."""
    present = set(true)
    return ["accuracy", "kappa", "macro_f1", *[f"f1_{c}" for c in CLASSES if c in present]]


def confusion_scores(confusion: np.ndarray, names: list[str]) -> np.ndarray:
    """Confusion matrices int [..., C, C] (rows: visual label, columns: prediction) -> the
    scores `names` (see `score_names`) float [..., K]."""
    size = confusion.shape[-1]
    labelled = confusion.sum(axis=-1)  # [..., C]: maps per visual label
    called = confusion.sum(axis=-2)  # [..., C]: maps per predicted class
    maps = labelled.sum(axis=-1)  # [...]
    hits = np.trace(confusion, axis1=-2, axis2=-1)  # [...]
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = called[..., :, None] * labelled[..., None, :] / maps[..., None, None]
        off_diagonal = 1 - np.eye(size, dtype=np.int64)
        chance = (off_diagonal * expected).reshape(*maps.shape, -1).sum(axis=-1)
        kappa = 1 - (maps - hits) / chance  # one class on both sides: 0 / 0, NaN
    diagonal = np.diagonal(confusion, axis1=-2, axis2=-1)  # [..., C]
    denominator = (labelled + called).astype(float)
    f1 = np.zeros(denominator.shape)
    np.divide(2.0 * diagonal, denominator, out=f1, where=denominator > 0)
    present = labelled > 0
    macro = (f1 * present).sum(axis=-1) / present.sum(axis=-1)
    columns = {"accuracy": hits / maps, "kappa": kappa, "macro_f1": macro}
    columns.update({f"f1_{c}": f1[..., i] for i, c in enumerate(CLASSES)})
    return np.stack([columns[name] for name in names], axis=-1)
