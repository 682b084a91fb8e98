"""The attention store's writer: streams examples into a new store (format:
pipeline/attention/store.py), under a temporary name renamed at the end."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.attention.store import (
    ID_COLUMNS,
    METADATA_KEY,
    QUANTIZE_MODES,
    SCHEMA_VERSION,
    TOKEN_COLUMNS,
    Quantize,
    TokenInfo,
    head_column,
    scale_column,
)
from pipeline.core.errors import PipelineError
from pipeline.core.io import atomic_path


def config_hash(*settings: Any) -> str:
    """A short stable hash of settings as plain JSON values (what a dump was made from)."""
    return hashlib.sha256(json.dumps(list(settings), sort_keys=True).encode()).hexdigest()[:16]


def quantize_rows(maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """8-bit codes of maps [..., n, n] with one float16 scale per row [..., n].

    The scale is each row's maximum rounded up to float16, so no code clips and the error of
    `codes * scale / 255` is at most scale / 510 <= (1 + 2^-10) * row max / 510 < row max / 255.
    """
    peak = maps.max(axis=-1).astype(np.float32)  # [..., n]
    scale = peak.astype(np.float16)
    low = scale.astype(np.float32) < peak
    scale[low] = np.nextafter(scale[low], np.float16(np.inf))
    safe = np.where(scale > 0, scale, 1).astype(np.float32)[..., None]  # [..., n, 1]
    codes = np.rint(maps / safe * 255).clip(0, 255).astype(np.uint8)  # [..., n, n]
    return codes, scale


def _schema(num_heads: int, quantize: Quantize, metadata: dict[str, Any]) -> pa.Schema:
    label = pa.dictionary(pa.int8(), pa.string())
    fields = [
        pa.field("variant", label, nullable=False),
        pa.field("task", label, nullable=False),
        pa.field("example_id", pa.int32(), nullable=False),
        pa.field("layer", pa.int16(), nullable=False),
        pa.field("length", pa.int16(), nullable=False),
    ]
    leaf = pa.float16() if quantize == "none" else pa.uint8()
    fields += [pa.field(head_column(h), pa.list_(leaf)) for h in range(num_heads)]
    if quantize == "uint8":
        fields += [pa.field(scale_column(h), pa.list_(pa.float16())) for h in range(num_heads)]
    fields += [
        pa.field("tokens", pa.list_(pa.string())),
        pa.field("segment_ids", pa.list_(pa.int8())),
        pa.field("word_ids", pa.list_(pa.int16())),
        pa.field("offsets", pa.list_(pa.int32())),
        pa.field("texts", pa.list_(pa.string())),
    ]
    return pa.schema(fields, metadata={METADATA_KEY: json.dumps(metadata, sort_keys=True)})


class AttentionWriter:
    """Streams examples into a new attention store; the file appears whole on success only.

    Use as a context manager and call `add` once per (variant, task, example) in sorted
    order. Rows are buffered into row groups of about `row_group_bytes` of raw maps; a row
    group never spans two (variant, task) pairs or splits an example.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        model_id: str,
        num_layers: int,
        num_heads: int,
        config_hash: str,
        quantize: Quantize = "none",
        row_group_bytes: int = 32 << 20,
        compression_level: int = 3,
        extra_metadata: dict[str, Any] | None = None,
    ) -> None:
        if quantize not in QUANTIZE_MODES:
            raise PipelineError(f"unknown dump.quantize '{quantize}'; use one of {QUANTIZE_MODES}")
        self.path = Path(path)
        self.shape = (num_layers, num_heads)
        self.quantize = quantize
        self.row_group_bytes = row_group_bytes
        self.metadata = {
            **(extra_metadata or {}),
            "schema_version": SCHEMA_VERSION,
            "model_id": model_id,
            "config_hash": config_hash,
            "num_layers": num_layers,
            "num_heads": num_heads,
            "quantize": quantize,
        }
        self.schema = _schema(num_heads, quantize, self.metadata)
        self.compression_level = compression_level
        self._stack = contextlib.ExitStack()
        self._writer: pq.ParquetWriter | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future | None = None
        # (key, codes [L, H, n, n] float16 or uint8, row scales [L, H, n] or None, tokens)
        self._buffer: list[tuple] = []
        self._buffered_bytes = 0
        self._last_key: tuple[str, str, int] | None = None
        self.num_examples = 0

    def __enter__(self) -> AttentionWriter:
        tmp = self._stack.enter_context(atomic_path(self.path))
        leaves = [f"{head_column(h)}.list.element" for h in range(self.shape[1])]
        if self.quantize == "uint8":
            leaves += [f"{scale_column(h)}.list.element" for h in range(self.shape[1])]
        self._writer = pq.ParquetWriter(
            tmp,
            self.schema,
            compression="zstd",
            compression_level=self.compression_level,
            use_dictionary=list(ID_COLUMNS),
            use_byte_stream_split=leaves,
            write_statistics=list(ID_COLUMNS),
            sorting_columns=[
                pq.SortingColumn(self.schema.get_field_index(c)) for c in ID_COLUMNS[:4]
            ],
        )
        # compression runs in a thread (pyarrow releases the GIL) while the model computes
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._stack.push(self._finish)  # runs before atomic_path renames or removes the file
        return self

    def __exit__(self, kind, error, trace) -> bool:
        return self._stack.__exit__(kind, error, trace)

    def _finish(self, kind, error, trace) -> None:
        """Write what is left and close the file; after a failure, only close it."""
        try:
            if error is None:
                self._flush()
            self._wait(raise_error=error is None)
        finally:
            self._pool.shutdown()
            self._writer.close()

    def _wait(self, raise_error: bool = True) -> None:
        """Wait for the row group being written; re-raise its error unless told not to."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        failure = pending.exception()  # blocks until the write ends
        if failure is not None and raise_error:
            raise failure

    def add(
        self,
        variant: str,
        task: str,
        example_id: int,
        maps: np.ndarray,  # float [layers, heads, n, n], cropped to the real length
        tokens: TokenInfo,
    ) -> None:
        if self._writer is None:
            raise PipelineError("AttentionWriter.add called outside its `with` block")
        num_layers, num_heads = self.shape
        n = len(tokens)
        if maps.shape != (num_layers, num_heads, n, n):
            raise PipelineError(
                f"maps of example {example_id} have shape {maps.shape}; expected "
                f"({num_layers}, {num_heads}, {n}, {n}) for {n} tokens"
            )
        key = (variant, task, int(example_id))
        if self._last_key is not None:
            if key[:2] != self._last_key[:2]:
                self._flush()
            if key <= self._last_key:
                raise PipelineError(
                    f"attention rows must come sorted by (variant, task, example_id): "
                    f"{key} after {self._last_key}"
                )
        self._last_key = key
        if self.quantize == "uint8":
            codes, scale = quantize_rows(maps.astype(np.float32, copy=False))
        else:
            codes, scale = maps if maps.dtype == np.float16 else _to_float16(maps), None
        self._buffer.append((key, codes, scale, tokens))
        self.num_examples += 1
        self._buffered_bytes += maps.size * 2
        if self._buffered_bytes >= self.row_group_bytes:
            self._flush()

    def _flush(self) -> None:
        """Write the buffered examples as one row group: L rows per example, heads as columns."""
        if not self._buffer:
            return
        num_layers, num_heads = self.shape
        keys = [key for key, *_ in self._buffer]
        lengths = np.array([len(info) for *_, info in self._buffer])
        columns: dict[str, pa.Array] = {
            "variant": pa.array([k[0] for k in keys for _ in range(num_layers)]),
            "task": pa.array([k[1] for k in keys for _ in range(num_layers)]),
            "example_id": pa.array(np.repeat([k[2] for k in keys], num_layers)),
            "layer": pa.array(np.tile(np.arange(num_layers), len(keys))),
            "length": pa.array(np.repeat(lengths, num_layers)),
        }
        row_lengths = np.repeat(lengths, num_layers)  # n per row
        for head in range(num_heads):
            # this head's [n, n] map of every (example, layer) row, flattened and concatenated
            values = np.concatenate([codes[:, head].reshape(-1) for _, codes, _, _ in self._buffer])
            columns[head_column(head)] = _list_array(values, row_lengths**2)
            if self.quantize == "uint8":
                scales = np.concatenate([s[:, head].reshape(-1) for _, _, s, _ in self._buffer])
                columns[scale_column(head)] = _list_array(scales, row_lengths)
        token_rows = [
            _token_columns(info) if layer == 0 else None
            for *_, info in self._buffer
            for layer in range(num_layers)
        ]
        for name in TOKEN_COLUMNS:
            columns[name] = [None if row is None else row[name] for row in token_rows]
        arrays = [
            pa.array(columns[f.name], type=f.type)
            if not isinstance(columns[f.name], pa.Array)
            else columns[f.name].cast(f.type)
            for f in self.schema
        ]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        self._buffer, self._buffered_bytes = [], 0
        self._wait()  # at most one row group in flight
        self._pending = self._pool.submit(self._writer.write_table, table)


def _token_columns(info: TokenInfo) -> dict[str, Any]:
    """The token columns of an example's layer-0 row."""
    return {
        "tokens": list(info.tokens),
        "segment_ids": np.asarray(info.segment_ids),
        "word_ids": np.asarray(info.word_ids),
        "offsets": np.asarray(info.offsets).reshape(-1),  # [n, 2] -> [2n]
        "texts": list(info.texts),
    }


def _to_float16(maps: np.ndarray) -> np.ndarray:
    """float16 copy of `maps`, through torch (NumPy's float16 cast is ~10x slower)."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(maps)).to(torch.float16).numpy()


def _list_array(values: np.ndarray, sizes: np.ndarray) -> pa.ListArray:
    """A list array whose i-th list holds the next sizes[i] of `values`."""
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values))


def write_attention(
    path: str | Path,
    records: Iterable[tuple[str, str, int, np.ndarray, TokenInfo]],
    **settings: Any,
) -> int:
    """Write (variant, task, example_id, maps [L, H, n, n], tokens) records; returns the count.

    `settings` are AttentionWriter's keyword arguments (model_id, num_layers, ...).
    """
    with AttentionWriter(path, **settings) as writer:
        for record in records:
            writer.add(*record)
    return writer.num_examples
