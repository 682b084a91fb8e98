"""Attention maps of each pattern class built by hand, a small pattern CNN's settings, and label
files, for the pattern taxonomy's tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analyses.patterns_train.settings import PatternClassifier
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.features import special_mask
from pipeline.kovaleva.patterns.labels import LABEL_COLUMNS
from pipeline.kovaleva.patterns.mapsets import LabelledMap


def pair_tokens(a: int, b: int) -> tuple[list[str], np.ndarray]:
    """[CLS] a.. [SEP] b.. [SEP]: tokens and segment ids [n]."""
    tokens = ["[CLS]", *[f"a{i}" for i in range(a)], "[SEP]", *[f"b{i}" for i in range(b)], "[SEP]"]
    segments = np.array([0] * (a + 2) + [1] * (b + 1))
    return tokens, segments


def pattern_map(
    kind: str, tokens: list[str], segments: np.ndarray, noise: float, rng
) -> np.ndarray:
    """A map [n, n] of class `kind` plus `noise` of random (Dirichlet) attention per row."""
    n = len(tokens)
    special = special_mask(tokens)
    vertical = special / special.sum() * np.ones((n, 1))  # [n, n]
    previous = np.eye(n, k=-1) * ~special[None, :]  # the previous token where it is plain,
    previous += np.eye(n, k=1) * ~special[None, :] * (previous.sum(-1, keepdims=True) == 0)
    previous[previous.sum(-1) == 0, 0] = 1.0  # else the next one, else [CLS]
    block = (segments[:, None] == segments[None, :]) & ~special[None, :]
    block = block / block.sum(-1, keepdims=True)
    clean = {
        "vertical": vertical,
        "diagonal": previous,
        "vertical+diagonal": 0.5 * vertical + 0.5 * previous,
        "block": block,
        "heterogeneous": rng.dirichlet(np.full(n, 0.3), size=n),
    }[kind]
    return (1 - noise) * clean + noise * rng.dirichlet(np.ones(n), size=n)


def synthetic_set(count: int, seed: int) -> tuple[list[LabelledMap], np.ndarray]:
    rng = np.random.default_rng(seed)
    maps, labels = [], []
    for i in range(count):
        kind = CLASSES[i % len(CLASSES)]
        tokens, segments = pair_tokens(int(rng.integers(4, 20)), int(rng.integers(4, 20)))
        weights = pattern_map(kind, tokens, segments, 0.15, rng).astype(np.float32)
        maps.append(LabelledMap(weights, tuple(tokens)))
        labels.append(kind)
    return maps, np.asarray(labels)


SMALL_CNN = PatternClassifier(
    input_size=32,
    channels=[4, 4, 8, 8, 16, 16, 32, 32],
    dropout=0.3,
    folds=3,
    ensemble=1,
    cv_ensemble=1,
    workers=1,
    bootstrap_resamples=50,
    epochs=20,
    batch_size=20,
    learning_rate=3e-3,
    average_last=5,
    threads=1,
)


def write_labels_csv(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=list(LABEL_COLUMNS)).to_csv(path, index=False)
    return path


def page_maps(rng) -> dict[str, LabelledMap]:
    """Three maps for the annotation page: v1 vertical, v2 diagonal, v3 block, on one pair."""
    tokens, segments = pair_tokens(3, 3)
    return {
        m: LabelledMap(
            pattern_map(kind, tokens, segments, 0.0, rng).astype(np.float32), tuple(tokens)
        )
        for m, kind in zip(("v1", "v2", "v3"), ("vertical", "diagonal", "block"), strict=True)
    }
