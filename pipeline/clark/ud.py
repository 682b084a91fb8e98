"""Reading Universal Dependencies trees from CoNLL-U files and treebank folders."""

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


def base_relation(label: str) -> str:
    """`nmod:poss` -> `nmod`: UD's universal relation without its language subtype."""
    return label.split(":", 1)[0]


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    with path.open(encoding="utf-8") as handle:
        yield from enumerate(handle, start=1)


def read_conllu(path: str | Path, strip_subtypes: bool = True) -> list[Sentence]:
    """Basic trees of a CoNLL-U file; multi-word token lines and empty nodes are skipped."""
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
            sentences.append(_sentence(sent_id or str(len(sentences)), rows, strip_subtypes))
            sent_id, rows = "", []
    if rows:
        sentences.append(_sentence(sent_id or str(len(sentences)), rows, strip_subtypes))
    return sentences


def _sentence(sent_id: str, rows: list[list[str]], strip_subtypes: bool) -> Sentence:
    relations = [base_relation(r[7]) if strip_subtypes else r[7] for r in rows]
    return Sentence(
        sent_id=sent_id,
        words=tuple(r[1] for r in rows),
        heads=tuple(int(r[6]) for r in rows),
        relations=tuple(relations),
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
    folder: str | Path, split: str, size: int | None, seed: int, strip_subtypes: bool = True
) -> list[Sentence]:
    """`size` sentences drawn at random from a treebank folder's `split` file (train, dev or
    test), in file order; all of them when `size` is None."""
    sentences = read_conllu(treebank_file(Path(folder), split), strip_subtypes)
    return [sentences[i] for i in seeded_subset(len(sentences), size, seed)]
