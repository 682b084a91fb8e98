"""A coreference head on GAP (Clark et al. 2019, Sec. 4.3, with GAP in place of CoNLL-2012).

Each GAP example has a pronoun and two candidate names, A and B, of which at most one is
its antecedent; the examples where neither is are left out. A head "resolves" the pronoun
to the name it attends to most: the pronoun's attention row (the mean over its pieces) is
summed over the pieces of each word, and a name scores the most-attended of its words. The
head is right when the correct name scores strictly higher. The baseline picks the name
nearest to the pronoun in the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from transformers import PreTrainedTokenizerBase

from pipeline.clark.words import piece_groups
from pipeline.core.errors import PipelineError
from pipeline.data.sampling import seeded_subset

GAP_COLUMNS = (
    "Text",
    "Pronoun",
    "Pronoun-offset",
    "A",
    "A-offset",
    "A-coref",
    "B",
    "B-offset",
    "B-coref",
)


@dataclass(frozen=True)
class Span:
    start: int  # character offset
    end: int  # exclusive

    def distance(self, other: Span) -> int:
        """Characters between two spans (0 when they touch or overlap)."""
        return max(other.start - self.end, self.start - other.end, 0)


@dataclass(frozen=True)
class GapExample:
    text: str
    pronoun: Span
    names: tuple[Span, Span]  # A, B
    answer: int  # 0: A is the antecedent, 1: B is


def read_gap(path: str | Path) -> list[GapExample]:
    """The GAP examples of one TSV file whose pronoun refers to exactly one of A and B."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"GAP file not found: {path}; set clark_coref.dir to the GAP folder")
    frame = pd.read_csv(path, sep="\t", quoting=3, keep_default_na=False, dtype=str)
    missing = [c for c in GAP_COLUMNS if c not in frame.columns]
    if missing:
        raise PipelineError(f"{path}: missing GAP columns {missing}; is this a GAP TSV file?")
    examples = []
    for row in frame.itertuples(index=False):
        fields = dict(zip(frame.columns, row, strict=True))
        flags = (fields["A-coref"].upper() == "TRUE", fields["B-coref"].upper() == "TRUE")
        if flags[0] == flags[1]:
            continue  # neither name (or, malformed, both) is the antecedent
        spans = [
            Span(int(fields[f"{key}-offset"]), int(fields[f"{key}-offset"]) + len(fields[key]))
            for key in ("Pronoun", "A", "B")
        ]
        examples.append(GapExample(fields["Text"], spans[0], (spans[1], spans[2]), int(flags[1])))
    return examples


def read_gap_sample(
    folder: str | Path, split: str, size: int | None, seed: int
) -> list[GapExample]:
    """`size` examples drawn at random from a GAP folder's `gap-<split>.tsv` (development,
    validation or test), in file order; all of them when `size` is None."""
    examples = read_gap(Path(folder) / f"gap-{split}.tsv")
    return [examples[i] for i in seeded_subset(len(examples), size, seed)]


def nearest_candidate(example: GapExample) -> int:
    """The baseline's choice: the name nearest the pronoun (A on a tie)."""
    a, b = (example.pronoun.distance(name) for name in example.names)
    return int(b < a)


@dataclass(frozen=True)
class EncodedGap:
    encoding: dict[str, list[int]]
    pronoun: np.ndarray  # piece positions of the pronoun
    names: tuple[np.ndarray, np.ndarray]  # word (group) indices of A and B
    groups: np.ndarray  # int [n]: word of each piece (pipeline.clark.words.piece_groups)


def _pieces(offsets: np.ndarray, span: Span) -> np.ndarray:
    """Positions of the pieces overlapping a character span (specials have empty offsets)."""
    starts, ends = offsets[:, 0], offsets[:, 1]
    return np.flatnonzero((ends > starts) & (starts < span.end) & (ends > span.start))


def encode_gap(
    tokenizer: PreTrainedTokenizerBase, example: GapExample, max_length: int
) -> EncodedGap | None:
    """Tokenise one text; None when the pronoun or a name falls beyond `max_length`."""
    encoded = tokenizer(
        example.text, truncation=True, max_length=max_length, return_offsets_mapping=True
    )
    offsets = np.asarray(encoded["offset_mapping"])  # [n, 2]
    groups = piece_groups(encoded.word_ids())
    pronoun = _pieces(offsets, example.pronoun)
    names = tuple(np.unique(groups[_pieces(offsets, name)]) for name in example.names)
    if len(pronoun) == 0 or any(len(words) == 0 for words in names):
        return None
    keys = [k for k in ("input_ids", "token_type_ids") if k in encoded]
    return EncodedGap({k: encoded[k] for k in keys}, pronoun, names, groups)


def name_scores(maps: torch.Tensor, item: EncodedGap) -> torch.Tensor:
    """Each head's attention from the pronoun to A and to B: maps [L, H, n, n] -> [2, L, H]."""
    row = maps[..., item.pronoun, :].mean(-2)  # [L, H, n]: the pronoun's attention row
    groups = torch.as_tensor(item.groups)
    to_words = torch.zeros(*row.shape[:-1], int(groups.max()) + 1).index_add_(-1, groups, row)
    return torch.stack([to_words[..., torch.as_tensor(w)].amax(-1) for w in item.names])


def head_correct(scores: Sequence[torch.Tensor], answers: Sequence[int]) -> np.ndarray:
    """Whether the correct name scores strictly higher, per example and head: bool [E, L, H]."""
    stacked = torch.stack(list(scores))  # [E, 2, L, H]
    answer = torch.as_tensor(answers)[:, None, None]  # [E, 1, 1]
    right = stacked[:, 0] > stacked[:, 1]  # A wins
    return torch.where(answer == 0, right, stacked[:, 1] > stacked[:, 0]).numpy()
