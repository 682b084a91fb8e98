"""The framenet stage's work: relation-specific heads on FrameNet (Kovaleva et al. Figs. 3-4).

`score_heads` runs the pre-trained model on FrameNet sentences, scores every head on each
sentence by the maximum attention from the core frame-element pieces to the lexical-unit
(target) pieces (`measures.frame_score`), averages over sentences, and lists the best heads
with the sentence where each scores highest. Every head's mean carries a 95% percentile
bootstrap interval over sentences, and `top1_over_median` (the best head's score over the
median head's) re-chooses the best head inside each resample, so the interval accounts for
picking it. The tables and metrics it returns number layers and heads from 1 (`L3-H5`); the
functions they come from count from 0.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.analyses.framenet.settings import FramenetConfig
from pipeline.attention.capture import stream_maps
from pipeline.attention.dump_attention import Example, tokenize_examples
from pipeline.core.head_names import head_name, numbered_from_one
from pipeline.core.schema import TaskConfig
from pipeline.core.stats import bootstrap_interval
from pipeline.kovaleva.formulas import frame_score
from pipeline.kovaleva.framenet_data import FrameSentence, piece_indices
from pipeline.kovaleva.tables import grid_table, head_interval_frame

log = logging.getLogger(__name__)

# FrameNet sentences as one-segment inputs of `tokenize_examples`, which reads a task's
# text columns (and nothing else of it).
SENTENCE_INPUT = TaskConfig(name="framenet", text_columns=["text"])


@dataclass(frozen=True)
class FrameNetHeads:
    """What `score_heads` gives the stage to write; layers and heads numbered from 1."""

    heads: pd.DataFrame  # per head: layer, head, score (+ _ci_low, _ci_high), sentences
    top_heads: pd.DataFrame  # per rank: rank, layer, head, score (+ CI), its best sentence ...
    top_head_maps: pd.DataFrame  # per rank, query and key: layer, head, tokens, weight
    sentences: int  # how many sentences were scored
    metrics: dict[str, float | int | str]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem."""
        return {
            "heads": self.heads,
            "top_heads": self.top_heads,
            "top_head_maps": self.top_head_maps,
        }


def encode_sentences(
    tokenizer: PreTrainedTokenizerBase, sentences: Sequence[FrameSentence], max_length: int
) -> list[Example]:
    """Model inputs and word pieces of each sentence, encoded as the attention dump encodes
    GLUE rows; `example_id` is the sentence's position in `sentences`."""
    frame = pd.DataFrame({"idx": range(len(sentences)), "text": [s.text for s in sentences]})
    return tokenize_examples(tokenizer, SENTENCE_INPUT, frame, max_length)


def sentence_score(maps: np.ndarray, example: Example, sentence: FrameSentence) -> np.ndarray:
    """Per head, the max attention from the core-FE pieces to the target pieces of one
    sentence: maps [L, H, n, n] -> [L, H]."""
    special = example.tokens.word_ids < 0  # [n]
    fe = piece_indices(example.tokens.offsets, special, sentence.core_fes)
    lu = piece_indices(example.tokens.offsets, special, [sentence.target])
    return frame_score(maps, fe, lu)


def describe(sentence: FrameSentence) -> dict[str, str]:
    """The columns of top_heads.csv that show a head's best sentence."""
    target = sentence.text[sentence.target.start : sentence.target.end]
    fes = [sentence.text[fe.start : fe.end] for fe in sentence.core_fes]
    return {
        "frame": sentence.frame,
        "lexical_unit": sentence.lu,
        "target": target,
        "core_fes": "; ".join(
            f"{fe.name}={text}" for fe, text in zip(sentence.core_fes, fes, strict=True)
        ),
        "sentence": sentence.text,
        "note": f"FE {' / '.join(fes)} -> LU {target}",
    }


def capture_sentence_maps(
    model: PreTrainedModel, examples: Sequence[Example], batch_size: int, pad_id: int
) -> list[np.ndarray]:
    """Every map [L, H, n, n] of each example, in the order of `examples`."""
    maps: list[np.ndarray] = [np.empty(0)] * len(examples)
    encodings = [example.row for example in examples]
    desc = "framenet: pre-trained attention"
    for i, captured in stream_maps(model, encodings, batch_size, pad_id, desc):
        maps[i] = captured.numpy()
    return maps


def top_head_tables(
    heads: pd.DataFrame,
    scores: np.ndarray,
    maps: Sequence[np.ndarray],
    examples: Sequence[Example],
    sentences: Sequence[FrameSentence],
    top_heads: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """top_heads and top_head_maps (0-based) of the `top_heads` best rows of `heads` (with
    score intervals), each on the first sentence where it scores highest. `scores`
    [N, L, H] and `maps` ([L, H, n, n] each) are per sentence."""
    best = heads.sort_values("score", ascending=False).head(top_heads)
    rows, cells = [], []
    for rank, row in enumerate(best.itertuples(), start=1):
        layer, head = row.layer, row.head
        chosen = int(np.argmax(scores[:, layer, head]))  # ties: the first sentence
        rows.append(
            {
                "rank": rank,
                "layer": layer,
                "head": head,
                "score": float(row.score),
                "score_ci_low": float(row.score_ci_low),
                "score_ci_high": float(row.score_ci_high),
                "example_score": float(scores[chosen, layer, head]),
                **describe(sentences[chosen]),
            }
        )
        one_head = maps[chosen][layer : layer + 1, head : head + 1]  # [1, 1, n, n]
        grid = grid_table(one_head, examples[chosen].tokens.tokens)
        grid["layer"], grid["head"] = layer, head
        grid.insert(0, "rank", rank)
        cells.append(grid)
    return pd.DataFrame(rows), pd.concat(cells, ignore_index=True)


def top_over_median(scores: np.ndarray) -> float:
    """The best head's mean score over the median head's, from per-sentence scores [N, K]
    (K heads): max_k m_k / median_k m_k with m_k = mean_n scores[n, k]."""
    means = scores.mean(axis=0)  # [K]
    return float(means.max() / np.median(means))


def score_heads(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[FrameSentence],
    settings: FramenetConfig,
    *,
    max_length: int,
    seed: int,
) -> FrameNetHeads:
    """Figs. 3-4: every head's mean FrameNet score over `sentences` with its 95% interval
    (`settings.bootstrap_resamples` resamples of sentences, seeded by `seed`), and the
    `settings.top_heads` best heads with their best sentence. `model`: the pre-trained
    encoder, engine-attached; `max_length`: word pieces per sentence."""
    batch_size, top_heads = settings.batch_size, settings.top_heads
    n_resamples = settings.bootstrap_resamples
    examples = encode_sentences(tokenizer, sentences, max_length)
    maps = capture_sentence_maps(model, examples, batch_size, tokenizer.pad_token_id)
    scores = np.stack(
        [sentence_score(m, e, s) for m, e, s in zip(maps, examples, sentences, strict=True)]
    )  # [N, L, H]
    count = len(scores)
    heads = head_interval_frame(scores, "score", n_resamples, seed)
    heads = heads.rename(columns={"examples": "sentences"})
    top, cells = top_head_tables(heads, scores, maps, examples, sentences, top_heads)

    metrics: dict[str, float | int | str] = {
        "sentences": count,
        "mean_score": float(heads["score"].mean()),
    }
    for row in top.itertuples():
        metrics[f"top{row.rank}.head"] = head_name(row.layer, row.head)
        metrics[f"top{row.rank}.score"] = float(row.score)
        metrics[f"top{row.rank}.score_ci_low"] = row.score_ci_low
        metrics[f"top{row.rank}.score_ci_high"] = row.score_ci_high
    per_head = scores.reshape(count, -1)  # [N, L*H]
    ratio = bootstrap_interval(top_over_median, per_head, n_resamples=n_resamples, seed=seed)
    metrics.update(ratio.as_dict("top1_over_median"))
    log.info("framenet: top head %s score %.3f", metrics["top1.head"], metrics["top1.score"])
    return FrameNetHeads(
        heads=numbered_from_one(heads),
        top_heads=numbered_from_one(top),
        top_head_maps=numbered_from_one(cells),
        sentences=count,
        metrics=metrics,
    )
