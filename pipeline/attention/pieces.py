"""The text of a word piece without its tokenizer's word marks, so that the analyses that read
a piece's characters (is it punctuation?) read BERT's, RoBERTa's and ALBERT's pieces alike."""

from __future__ import annotations

# WordPiece's continuation prefix, then the word-start marks of byte-level BPE (RoBERTa,
# ModernBERT: "Ġ", a space byte) and of SentencePiece (ALBERT, DeBERTa-v3: "▁")
WORD_MARKS = ("##", "\u0120", "\u2581")


def piece_text(piece: str) -> str:
    """`piece` without a leading word mark: `##ing` -> `ing`, `Ġ,` -> `,`, `▁.` -> `.`."""
    for mark in WORD_MARKS:
        if piece.startswith(mark):
            return piece[len(mark) :]
    return piece
