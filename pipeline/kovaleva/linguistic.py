"""Token types of word pieces: [CLS], [SEP], and linguistic types from spaCy (Kovaleva Fig. 6-7).

spaCy tags each sentence of an example; a word piece takes the types of every spaCy token
whose character span overlaps its own (same sentence, offsets from the attention store). A
linguistic type is a rule over spaCy's coarse POS tag, dependency label and lower-cased
text: a token has the type when any of the listed values matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.analyses.analyze.settings import TokenTypeRule
from pipeline.attention.store import TokenInfo
from pipeline.core.errors import PipelineError

SPECIAL_TYPES = ("[CLS]", "[SEP]")


@dataclass(frozen=True)
class Word:
    """One spaCy token: its character span [start, end) in its sentence and its labels."""

    start: int
    end: int
    pos: str
    dep: str
    lower: str


def matches(rule: TokenTypeRule, word: Word) -> bool:
    """Whether `word` has the rule's type: any of its POS, dependency or words matches."""
    return word.pos in rule.pos or word.dep in rule.dep or word.lower in rule.lower


def spacy_words(docs: Sequence) -> list[list[Word]]:
    """spaCy Docs -> per sentence, its tokens as `Word`s."""
    return [
        [Word(t.idx, t.idx + len(t.text), t.pos_, t.dep_, t.lower_) for t in doc] for doc in docs
    ]


def piece_type_masks(
    word_ids: np.ndarray,  # [n], -1 for special tokens
    segment_ids: np.ndarray,  # [n], which sentence each piece belongs to
    offsets: np.ndarray,  # [n, 2] character span [start, end) within its sentence
    words: Sequence[Sequence[Word]],  # per sentence, its spaCy tokens
    rules: Mapping[str, TokenTypeRule],
) -> dict[str, np.ndarray]:
    """{type: bool [n]} for [CLS], [SEP] and every linguistic type.

    [CLS] is the first piece when it is special; [SEP] every other special piece.
    """
    n = len(word_ids)
    special = word_ids < 0  # [n]
    masks = {"[CLS]": np.zeros(n, bool), "[SEP]": special.copy()}
    if special[0]:
        masks["[CLS]"][0] = True
        masks["[SEP]"][0] = False
    for name in rules:
        masks[name] = np.zeros(n, bool)
    for i in np.flatnonzero(~special):
        start, end = offsets[i]
        for word in words[segment_ids[i]]:
            if word.start < end and start < word.end:  # the spans overlap
                for name, rule in rules.items():
                    if matches(rule, word):
                        masks[name][i] = True
    return masks


def load_spacy(name: str):
    """A spaCy pipeline with the tagger and parser (named-entity recognition left out)."""
    import spacy

    try:
        return spacy.load(name, exclude=["ner"])
    except OSError as error:
        package = name.replace("_", "-")
        raise PipelineError(
            f"spaCy pipeline '{name}' is not installed; run `pip install --no-deps {package}` "
            "or set analyze.spacy_model"
        ) from error


def example_type_masks(
    infos: Mapping[int, TokenInfo], nlp, rules: Mapping[str, TokenTypeRule], batch_size: int = 64
) -> dict[int, dict[str, np.ndarray]]:
    """{example_id: {type: bool [n]}}: spaCy runs once over every sentence of the examples."""
    texts = [text for info in infos.values() for text in info.texts]
    docs = iter(nlp.pipe(texts, batch_size=batch_size))
    masks = {}
    for example_id, info in infos.items():
        words = spacy_words([next(docs) for _ in info.texts])
        masks[example_id] = piece_type_masks(
            info.word_ids, info.segment_ids, info.offsets, words, rules
        )
    return masks
