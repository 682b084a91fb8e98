"""Reading Universal Dependencies trees from CoNLL-U files and treebank folders, and the
arcs scored against attention: UD's own (relations with their subtypes, as `aux:pass` and
`nmod:poss`) and Clark et al.'s `prep` and `pobj`, rebuilt from UD's `case` (see
`rebuilt_prepositions`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import PipelineError
from pipeline.data.sampling import seeded_subset


@dataclass(frozen=True)
class Sentence:
    """One dependency tree; words are 1-based in `heads` (0 = root), 0-based in the lists."""

    sent_id: str
    words: tuple[str, ...]
    heads: tuple[int, ...]  # heads[j] = 1-based index of word j+1's head, 0 for the root
    relations: tuple[str, ...]  # relations[j] = relation of word j+1 to its head
    upos: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.words)

    @property
    def arcs(self) -> list[Arc]:
        """Every non-root UD arc, then the rebuilt Stanford `prep` and `pobj` arcs."""
        found = [
            Arc(j, head, relation)
            for j, (head, relation) in enumerate(zip(self.heads, self.relations, strict=True))
            if head != 0
        ]
        return found + rebuilt_prepositions(self)


@dataclass(frozen=True)
class Arc:
    """A dependent (0-based word index), its head (1-based, as in `Sentence.heads`) and the
    relation's name."""

    dependent: int
    head: int
    relation: str


# A noun that a preposition introduces: UD attaches it to the word it modifies as one of
# these (with any subtype but the possessive one, whose `case` is the clitic 's).
PREPOSITIONAL = ("obl", "nmod")
POSSESSIVE = "nmod:poss"
REBUILT = ("prep", "pobj")  # arcs beside UD's tree: not counted again among all relations


def rebuilt_prepositions(sentence: Sentence) -> list[Arc]:
    """Clark et al.'s (Stanford Dependencies) `prep` and `pobj` arcs, which UD reverses.

    Stanford attaches the preposition P to the word H the phrase modifies (`prep`: P -> H)
    and the noun N to P (`pobj`: N -> P). UD attaches N to H (`obl` or `nmod`) and P to N
    (`case`). So for every N attached as obl/nmod (not `nmod:poss`) that has exactly one
    `case` dependent P: `prep` is P -> head(N) and `pobj` is N -> P. A noun with two or more
    case words ("from under the bed") has no single Stanford analysis here and is skipped.
    """
    cases: dict[int, list[int]] = {}  # 1-based noun -> 0-based case words
    for j, (head, relation) in enumerate(zip(sentence.heads, sentence.relations, strict=True)):
        if relation == "case" and head != 0:
            cases.setdefault(head, []).append(j)
    arcs: list[Arc] = []
    for noun, words in sorted(cases.items()):
        relation, governor = sentence.relations[noun - 1], sentence.heads[noun - 1]
        introduced = relation.split(":", 1)[0] in PREPOSITIONAL and relation != POSSESSIVE
        if introduced and governor != 0 and len(words) == 1:
            (preposition,) = words
            prep, pobj = REBUILT
            arcs += [Arc(preposition, governor, prep), Arc(noun - 1, preposition + 1, pobj)]
    return arcs


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    with path.open(encoding="utf-8") as handle:
        yield from enumerate(handle, start=1)


def read_conllu(path: str | Path) -> list[Sentence]:
    """Basic trees of a CoNLL-U file, relations with their subtypes (`aux:pass`); multi-word
    token lines and empty nodes are skipped."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(
            f"CoNLL-U file not found: {path}; set clark_syntax.ud.dir to the UD folder"
        )
    sentences: list[Sentence] = []
    sent_id, rows = "", []
    for number, line in _rows(path):
        line = line.rstrip("\n")
        if line.startswith("# sent_id"):
            sent_id = line.split("=", 1)[1].strip()
        elif line and not line.startswith("#"):
            cols = line.split("\t")
            if len(cols) != 10:
                raise PipelineError(f"{path}:{number}: expected 10 tab-separated columns")
            if cols[0].isdigit():  # "3-4" (multi-word token) and "8.1" (empty node) skipped
                rows.append(cols)
        elif not line and rows:
            sentences.append(_sentence(sent_id or str(len(sentences)), rows))
            sent_id, rows = "", []
    if rows:
        sentences.append(_sentence(sent_id or str(len(sentences)), rows))
    return sentences


def _sentence(sent_id: str, rows: list[list[str]]) -> Sentence:
    return Sentence(
        sent_id=sent_id,
        words=tuple(r[1] for r in rows),
        heads=tuple(int(r[6]) for r in rows),
        relations=tuple(r[7] for r in rows),
        upos=tuple(r[3] for r in rows),
    )


def treebank_file(folder: Path, split: str) -> Path:
    """The one `*-ud-<split>.conllu` file of a UD treebank folder."""
    found = sorted(Path(folder).glob(f"*-ud-{split}.conllu"))
    if len(found) != 1:
        raise PipelineError(
            f"expected one *-ud-{split}.conllu in {folder}, found {len(found)}; "
            "set clark_syntax.ud.dir to a UD treebank folder"
        )
    return found[0]


def read_treebank_sample(
    folder: str | Path, split: str, size: int | None, seed: int
) -> list[Sentence]:
    """`size` sentences drawn at random from a treebank folder's `split` file (train, dev or
    test), in file order; all of them when `size` is None."""
    sentences = read_conllu(treebank_file(Path(folder), split))
    return [sentences[i] for i in seeded_subset(len(sentences), size, seed)]
