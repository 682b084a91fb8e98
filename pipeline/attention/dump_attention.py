"""Dumping attention: tokens with their word alignment, and every map of a model, into a store.

`dump_task` is the dump_attention stage's work: every map of several models (the variants)
on the same rows of one task, written into one store per measure: the weights at the stage's
path, another captured measure (`norms`, pipeline/attention/norms.py) in a store of the same
layout beside it (pipeline.attention.measures.measure_path), its measure in the metadata.

Under the `compile` setting each model's forward pass runs compiled
(pipeline/models/compilation.py), batch lengths padded up to a multiple of
`compile.pad_multiple` so that it compiles once per padded batch shape; the maps are cropped
to each example's real length as in an eager run, and the padding this costs is logged.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.capture import capture_measures
from pipeline.attention.engine import ROUTE, attach, model_shape
from pipeline.attention.measures import measure_path
from pipeline.attention.store import TokenInfo
from pipeline.attention.store_writer import AttentionWriter
from pipeline.core.errors import PipelineError
from pipeline.core.schema import CompileConfig, TaskConfig
from pipeline.data.batching import length_batches
from pipeline.data.encoding import encode
from pipeline.data.sampling import evaluation_sample
from pipeline.models.compilation import batch_shapes, compiled, log_padding, pad_multiple

if TYPE_CHECKING:  # a type only: the stages that import this module type no dump group
    from pipeline.analyses.dump_attention.settings import DumpAttentionConfig

log = logging.getLogger(__name__)

WINDOW = 128  # examples per window of ids: each is batched, then written in id order


@dataclass(frozen=True)
class Example:
    """One input to dump: its id in the split, model inputs and token alignment."""

    example_id: int
    row: dict[str, list[int]]  # input_ids (and token_type_ids), unpadded
    tokens: TokenInfo


def _segments(sequence_ids: list[int | None]) -> np.ndarray:
    """Segment per piece from the tokenizer's sequence ids; a special token takes its left one's."""
    segments, current = [], 0
    for sequence in sequence_ids:
        current = current if sequence is None else sequence
        segments.append(current)
    return np.asarray(segments, dtype=np.int64)


def _word_ids(word_ids: list[int | None], sequence_ids: list[int | None]) -> np.ndarray:
    """Word index per piece, sentence B's words numbered after sentence A's; -1 for specials."""
    words_in_a = 1 + max(
        (w for w, s in zip(word_ids, sequence_ids, strict=True) if s == 0), default=-1
    )
    return np.asarray(
        [
            -1 if w is None else w + (words_in_a if s == 1 else 0)
            for w, s in zip(word_ids, sequence_ids, strict=True)
        ],
        dtype=np.int64,
    )


def tokenize_examples(
    tokenizer: PreTrainedTokenizerBase, task: TaskConfig, frame: pd.DataFrame, max_length: int
) -> list[Example]:
    """Model inputs (as `pipeline.data.encoding.encode` makes them) and token alignment per row."""
    if not tokenizer.is_fast:
        raise PipelineError(
            f"{type(tokenizer).__name__} is a slow tokenizer; the dump needs a fast one "
            "(word ids and character offsets)"
        )
    rows = encode(tokenizer, task, frame, max_length)
    texts = [frame[column].tolist() for column in task.text_columns]
    aligned = tokenizer(*texts, truncation=True, max_length=max_length, return_offsets_mapping=True)
    examples = []
    for i, (example_id, row) in enumerate(zip(frame["idx"], rows, strict=True)):
        sequence_ids = aligned.sequence_ids(i)
        segment_ids = (
            np.asarray(row["token_type_ids"])
            if "token_type_ids" in row
            else _segments(sequence_ids)
        )
        info = TokenInfo(
            tokens=tokenizer.convert_ids_to_tokens(row["input_ids"]),
            segment_ids=segment_ids,
            word_ids=_word_ids(aligned.word_ids(i), sequence_ids),
            offsets=np.asarray(aligned["offset_mapping"][i], dtype=np.int64).reshape(-1, 2),
            texts=tuple(str(t[i]) for t in texts),
        )
        examples.append(Example(int(example_id), row, info))
    return examples


def dump_variant(
    model: PreTrainedModel,
    examples: Sequence[Example],
    writer: AttentionWriter,
    variant: str,
    task: str,
    *,
    batch_size: int,
    pad_id: int,
    window: int = WINDOW,
    others: Mapping[str, AttentionWriter] | None = None,
    forward: Callable[..., object] | None = None,
    multiple: int = 1,
) -> None:
    """Write every map of `model` on `examples` (sorted by id) into `writer` (the weights),
    and each other captured measure into its writer in `others` (measure -> writer).

    Examples go through in windows of `window` ids; inside a window they are batched by
    length, and the window is written in id order, so memory stays bounded. `forward` and
    `multiple`: how the passes run (`capture_measures`).
    """
    writers = {"weights": writer, **(others or {})}
    # float16 is what a lossless store keeps; 8-bit codes are made from the float32 maps
    dtype = torch.float16 if writer.quantize == "none" else torch.float32
    with tqdm(total=len(examples), desc=f"dump {task} {variant}", unit="ex") as progress:
        for start in range(0, len(examples), window):
            chunk = examples[start : start + window]
            maps: dict[tuple[str, int], np.ndarray] = {}  # (measure, id) -> [L, H, n, n]
            lengths = [len(e.row["input_ids"]) for e in chunk]
            for chosen in length_batches(lengths, batch_size):
                batch = [chunk[i] for i in chosen]
                captured = capture_measures(
                    model, [e.row for e in batch], pad_id, list(writers), dtype, forward, multiple
                )
                for measure, batch_maps in captured.items():
                    for example, example_maps in zip(batch, batch_maps, strict=True):
                        maps[measure, example.example_id] = example_maps.numpy()
                progress.update(len(batch))
            for measure, measure_writer in writers.items():
                for example in chunk:
                    measure_writer.add(
                        variant, task, example.example_id,
                        maps.pop((measure, example.example_id)), example.tokens,
                    )  # fmt: skip


def compilable(model: PreTrainedModel) -> bool:
    """True where `model` runs the engine's interface path, the one a compiled pass supports."""
    return getattr(model, ROUTE, None) == "interface"


def window_batches(
    examples: Sequence[Example], batch_size: int, window: int = WINDOW
) -> tuple[list[int], list[list[int]]]:
    """(lengths, batches): every example's length, and the batches `dump_variant` makes of
    them (indices into `examples`, batched by length within each window)."""
    lengths = [len(e.row["input_ids"]) for e in examples]
    batches = []
    for start in range(0, len(examples), window):
        in_window = length_batches(lengths[start : start + window], batch_size)
        batches += [[start + i for i in chosen] for chosen in in_window]
    return lengths, batches


def dump_task(
    models: Mapping[str, PreTrainedModel],
    tokenizer: PreTrainedTokenizerBase,
    task: TaskConfig,
    frame: pd.DataFrame,
    path: Path,
    settings: DumpAttentionConfig,
    *,
    max_length: int,
    model_id: str,
    config_hash: str,
    seed: int,
    compile_settings: CompileConfig | None = None,
) -> dict[str, float | int]:
    """Write every map of each model (variant name -> model, on its device) on a sample of
    `settings.num_examples` rows of `frame` drawn with `seed` (stratified by label,
    `pipeline.data.sampling.evaluation_sample`; the store keeps their ids) into a new store
    at `path` (the weights; each
    other measure of `settings.measures` beside it, `measure_path`); return its metrics:
    examples, mean_tokens, file_mib and bytes_vs_raw_float16 (the store's size over the
    raw float16 maps'). `compile_settings`: the `compile` setting, default eager."""
    if "weights" not in settings.measures:
        measures = ", ".join(settings.measures)
        raise PipelineError(
            f"dump_attention.measures [{measures}] lacks weights; every analysis reads them: "
            "add weights"
        )
    attached = {variant: attach(models[variant].eval()) for variant in sorted(models)}
    shapes = {variant: model_shape(model) for variant, model in attached.items()}
    if len(set(shapes.values())) > 1:
        raise PipelineError(
            f"the {task.name} models differ in shape {shapes}: the fine-tuned one was made from "
            "another `model`; fine-tune it again under these settings (`dvc repro finetune`)"
        )
    num_layers, num_heads = next(iter(shapes.values()))
    sample = evaluation_sample(frame, task, settings.num_examples, seed)
    examples = tokenize_examples(tokenizer, task, sample, max_length)
    multiple = pad_multiple(compile_settings)
    lengths, batches = window_batches(examples, settings.batch_size)
    log_padding(f"dump {task.name}", lengths, batches, multiple)
    # room for one graph per padded shape per variant (a variant of the same architecture
    # reuses the first one's graphs: its weights are graph inputs)
    shapes = batch_shapes(lengths, batches, multiple) * len(attached)
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        writers = {
            measure: stack.enter_context(
                AttentionWriter(
                    measure_path(path, measure),
                    model_id=model_id,
                    num_layers=num_layers,
                    num_heads=num_heads,
                    config_hash=config_hash,
                    quantize=settings.quantize,
                    row_group_bytes=int(settings.row_group_mib * 2**20),
                    extra_metadata={"measure": measure},
                )
            )
            for measure in settings.measures
        }
        weights = writers.pop("weights")
        for variant, model in attached.items():  # sorted: the store's row order
            dump_variant(
                model,
                examples,
                weights,
                variant,
                task.name,
                batch_size=settings.batch_size,
                pad_id=tokenizer.pad_token_id,
                others=writers,
                # the engine's hook path (MPNet, DeBERTa) stays eager
                forward=compiled(model, compile_settings if compilable(model) else None, shapes),
                multiple=multiple,
            )
    log.info(
        "%s: %d examples x %d variants in %.1f s -> %s",
        task.name,
        len(examples),
        len(models),
        time.perf_counter() - started,
        path,
    )
    lengths = np.array([len(e.tokens) for e in examples])  # [N] word pieces
    raw_bytes = len(models) * num_layers * num_heads * int((lengths**2).sum()) * 2
    size = path.stat().st_size
    return {
        "examples": len(examples),
        "mean_tokens": round(float(lengths.mean()), 2),
        "file_mib": round(size / 2**20, 3),
        "bytes_vs_raw_float16": round(size / raw_bytes, 4),
    }
