"""FrameNet 1.5 exemplar sentences for relation-specific heads (Kovaleva et al. Figs. 3-4).

Each lexical-unit file `lu/luN.xml` lists annotated example sentences of one lexical unit
(LU); the frame elements (FEs) it may take, with their coreness, are in its header. Texts
are tokenised with single spaces, and label spans are character offsets with an inclusive
end. The paper keeps a sentence when (defaults in brackets):

- it has at most `max_tokens` tokens [12];
- it has one target: one annotation set with a Target layer, holding one span;
- it has at least one core FE with a span, every one of at most `max_fe_tokens` tokens [3];
- no core-FE token lies within `target_window` tokens of a target token [2], i.e. every
  core FE is at least `target_window + 1` tokens away from the target.

The reader reads the release as it ships (`.tgz`) or unpacked, without unpacking anything.
The sentences that pass are kept as JSON lines (`to_jsonl`, `load_sentences`).
"""

from __future__ import annotations

import json
import re
import tarfile
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from pipeline.analyses.framenet.settings import FramenetConfig
from pipeline.core.errors import PipelineError
from pipeline.data.sampling import seeded_subset

CORE_TYPES = ("Core", "Core-Unexpressed")
_SENTENCE = re.compile(r"<sentence\b.*?</sentence>", re.S)
_TEXT = re.compile(r"<text>(.*?)</text>", re.S)
_HEADER_FE = re.compile(r'<FE\b[^>]*?\btype="([^"]+)"[^>]*?\bname="([^"]+)"')
_LU = re.compile(r"<lexUnit\b[^>]*>")
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_LU_FILE = re.compile(r"(^|/)lu/lu\d+\.xml$")


@dataclass(frozen=True)
class Span:
    """A labelled character span [start, end) of the sentence text."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class FrameSentence:
    """One annotated sentence: its lexical unit's target span and its core FE spans."""

    sentence_id: int
    lu: str
    frame: str
    text: str
    target: Span
    core_fes: tuple[Span, ...]


def token_spans(text: str) -> list[tuple[int, int]]:
    """Character spans [start, end) of the space-separated tokens of a FrameNet text."""
    return [m.span() for m in re.finditer(r"\S+", text)]


def tokens_of(span: Span, tokens: list[tuple[int, int]]) -> list[int]:
    """Indices of the tokens that overlap `span`."""
    return [k for k, (a, b) in enumerate(tokens) if a < span.end and span.start < b]


def _labels(layer: ET.Element) -> list[Span]:
    """A layer's labels that carry a span (null instantiations have none); end made exclusive."""
    return [
        Span(label.get("name", ""), int(label.get("start")), int(label.get("end")) + 1)
        for label in layer.iter("label")
        if label.get("start") is not None and label.get("end") is not None
    ]


def _parse_sentence(
    block: str, core: set[str]
) -> tuple[int, str, list[list[Span]], list[Span]] | None:
    """(id, text, target spans per target-bearing annotation set, core FE spans) of a block."""
    node = ET.fromstring(block)  # the namespace is declared on the root, not here
    text = node.findtext("text") or ""
    targets: list[list[Span]] = []
    fes: list[Span] = []
    for annotation in node.iter("annotationSet"):
        layers = {
            layer.get("name"): layer
            for layer in annotation.iter("layer")
            if layer.get("rank", "1") == "1"
        }
        target = _labels(layers["Target"]) if "Target" in layers else []
        if target:
            targets.append(target)
            if "FE" in layers:
                fes.extend(s for s in _labels(layers["FE"]) if s.name in core)
    return int(node.get("ID", -1)), text, targets, fes


def keep(text: str, targets: list[list[Span]], core_fes: list[Span], rule: FramenetConfig) -> bool:
    """Whether an annotated sentence passes the paper's filter (module docstring)."""
    tokens = token_spans(text)
    if len(tokens) > rule.max_tokens or len(targets) != 1 or len(targets[0]) != 1:
        return False
    if not core_fes:
        return False
    target = tokens_of(targets[0][0], tokens)
    if not target:
        return False
    for fe in core_fes:
        positions = tokens_of(fe, tokens)
        if not positions or len(positions) > rule.max_fe_tokens:
            return False
        gap = min(abs(i - j) for i in positions for j in target)
        if gap <= rule.target_window:
            return False
    return True


def read_lu_file(xml: str, rule: FramenetConfig) -> Iterator[FrameSentence]:
    """The sentences of one lexical-unit file that pass `rule`.

    Long sentences are dropped on their text alone, before any XML parsing.
    """
    head = _LU.search(xml)
    if head is None:
        return
    attrs = dict(_ATTR.findall(head.group(0)))
    lu, frame = attrs.get("name", ""), attrs.get("frame", "")
    core = {name for kind, name in _HEADER_FE.findall(xml) if kind in CORE_TYPES}
    for match in _SENTENCE.finditer(xml):
        block = match.group(0)
        raw = _TEXT.search(block)
        if raw is None or len(raw.group(1).split()) > rule.max_tokens:
            continue
        sentence_id, text, targets, fes = _parse_sentence(block, core)
        if keep(text, targets, fes, rule):
            yield FrameSentence(sentence_id, lu, frame, text, targets[0][0], tuple(fes))


def iter_lu_files(source: Path) -> Iterator[tuple[str, str]]:
    """(name, XML text) of every `lu/luN.xml` in a FrameNet release, `.tgz` or unpacked."""
    if not source.exists():
        raise PipelineError(
            f"FrameNet not found at {source}; point framenet.source at framenet-1.5.tgz "
            "or an unpacked fndata-1.5 folder"
        )
    if source.is_dir():
        files = sorted((source / "lu").glob("lu*.xml"))
        if not files:
            raise PipelineError(f"{source} has no lu/lu*.xml files; is it fndata-1.5?")
        for path in files:
            yield path.name, path.read_text(encoding="utf-8")
        return
    with tarfile.open(source, "r:*") as archive:
        for member in archive:
            if member.isfile() and _LU_FILE.search(member.name):
                handle = archive.extractfile(member)
                yield Path(member.name).name, handle.read().decode("utf-8")


def read_sentences(source: Path, rule: FramenetConfig) -> list[FrameSentence]:
    """Every sentence of the release that passes `rule`, ordered by sentence id."""
    from tqdm import tqdm

    found = [
        sentence
        for _, xml in tqdm(iter_lu_files(source), desc="FrameNet lexical units", unit="file")
        for sentence in read_lu_file(xml, rule)
    ]
    return sorted(found, key=lambda s: s.sentence_id)


def to_record(sentence: FrameSentence) -> dict:
    """A JSON-ready dict of a sentence (inverse: `from_record`)."""
    return asdict(sentence)


def from_record(record: dict) -> FrameSentence:
    return FrameSentence(
        sentence_id=int(record["sentence_id"]),
        lu=record["lu"],
        frame=record["frame"],
        text=record["text"],
        target=Span(**record["target"]),
        core_fes=tuple(Span(**fe) for fe in record["core_fes"]),
    )


def to_jsonl(sentences: Sequence[FrameSentence]) -> str:
    """One JSON record per line (sorted keys), as data/framenet/sentences.jsonl holds them."""
    return "".join(json.dumps(to_record(s), sort_keys=True) + "\n" for s in sentences)


def load_sentences(path: Path, limit: int | None, seed: int) -> list[FrameSentence]:
    """A seeded sample of `limit` sentences (None: all) of a `to_jsonl` file, in file order."""
    if not path.exists():
        raise PipelineError(f"{path} not found; run the framenet_data stage first")
    sentences = [from_record(json.loads(line)) for line in path.read_text().splitlines()]
    return [sentences[i] for i in seeded_subset(len(sentences), limit, seed)]


def sentence_counts(sentences: Sequence[FrameSentence]) -> dict[str, int]:
    """How many sentences, frames and lexical units passed, and sentences per core-FE count."""
    fe_counts = Counter(len(s.core_fes) for s in sentences)
    return {
        "sentences": len(sentences),
        "frames": len({s.frame for s in sentences}),
        "lexical_units": len({s.lu for s in sentences}),
        **{f"with_{k}_core_fes": v for k, v in sorted(fe_counts.items())},
    }


def piece_indices(offsets: np.ndarray, special: np.ndarray, spans: Sequence[Span]) -> np.ndarray:
    """Indices of the word pieces (offsets [n, 2], special bool [n]) overlapping any span."""
    hits = np.zeros(len(offsets), dtype=bool)
    for span in spans:
        hits |= (offsets[:, 0] < span.end) & (span.start < offsets[:, 1])
    return np.flatnonzero(hits & ~special)
