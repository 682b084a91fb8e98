"""The attention store: attention maps and their tokens in one Parquet file.

Layout (one file per task and fine-tuning seed, outputs/attention/<task>/seed<seed>.parquet,
see `store_path`):
- one row per (variant, task, example_id, layer), rows sorted by that key;
- id columns `variant`, `task` (dictionary-encoded strings), `example_id`, `layer`, `length`
  (the example's real length n); only these are dictionary-encoded and carry statistics;
- one column per head, `head_<h>`: the layer's [n, n] map for head h, cropped to the real
  length and flattened, as float16 (lossless mode) or uint8 (`quantize="uint8"`, with the
  per-query-row scale in `scale_<h>`, float16: value = code * scale / 255);
- token columns on the layer-0 rows (null elsewhere): `tokens`, `segment_ids`, `word_ids`,
  `offsets` (flattened [n, 2]), `texts`.

A head is a column, so reading one head over all examples reads 1/H of the map bytes
(column pruning); rows sorted by example let a reader skip row groups of other
examples (row-group pruning). Float leaves are byte-stream-split, everything is zstd.
The file metadata (key `dark_secrets.attention`) holds the schema version, model id, config
hash, the model's shape and the measure the maps hold (`weights` when absent; see
pipeline/attention/measured.py). The writer writes under a temporary name and renames at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from omegaconf import DictConfig, OmegaConf

from pipeline.core.errors import PipelineError
from pipeline.core.heads import check_head
from pipeline.core.io import atomic_path
from pipeline.core.stage import seed_folder

SCHEMA_VERSION = 1
METADATA_KEY = b"dark_secrets.attention"
ID_COLUMNS = ("variant", "task", "example_id", "layer", "length")
TOKEN_COLUMNS = ("tokens", "segment_ids", "word_ids", "offsets", "texts")
Quantize = Literal["none", "uint8"]
QUANTIZE_MODES = ("none", "uint8")


def store_path(root: Path, task: str, seed: int) -> Path:
    """The dump of `task` made with the model fine-tuned with `seed` (its pre-trained maps
    beside the fine-tuned ones): <root>/<task>/seed<seed>.parquet."""
    return Path(root) / task / f"{seed_folder(seed)}.parquet"


@dataclass(frozen=True)
class TokenInfo:
    """The word pieces of one example and how they map back to words and characters."""

    tokens: list[str]  # word pieces, [CLS] and [SEP] included
    segment_ids: np.ndarray  # int [n]: 0 for sentence A, 1 for sentence B
    word_ids: np.ndarray  # int [n]: word each piece belongs to (B's after A's); -1 special
    offsets: np.ndarray  # int [n, 2]: character span of each piece in its own sentence
    texts: tuple[str, ...]  # the input sentence(s)

    def __len__(self) -> int:
        return len(self.tokens)


def head_column(head: int) -> str:
    return f"head_{head}"


def scale_column(head: int) -> str:
    return f"scale_{head}"


def config_hash(*nodes: DictConfig | dict) -> str:
    """A short stable hash of config nodes (what a dump was made from)."""
    data = [
        OmegaConf.to_container(n, resolve=True) if isinstance(n, DictConfig) else n for n in nodes
    ]
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


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


def dequantize_rows(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """float32 maps [..., n, n] from codes [..., n, n] and row scales [..., n]."""
    return codes.astype(np.float32) * (scale.astype(np.float32) / 255)[..., None]


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


class MapReader:
    """`maps` for any reader that streams maps with `iter_maps`."""

    def iter_maps(
        self,
        variant: str,
        task: str,
        layers: Sequence[int] | None = None,
        heads: Sequence[int] | None = None,
        examples: Iterable[int] | None = None,
    ) -> Iterator[tuple[int, np.ndarray]]:
        raise NotImplementedError

    def maps(
        self,
        variant: str,
        task: str,
        layers: Sequence[int] | None = None,
        heads: Sequence[int] | None = None,
        examples: Iterable[int] | None = None,
    ) -> dict[int, np.ndarray]:
        """example_id -> float32 maps [len(layers), len(heads), n, n] (None: all)."""
        return dict(self.iter_maps(variant, task, layers, heads, examples))


class AttentionStore(MapReader):
    """Reads an attention store as NumPy arrays, filtered by variant, task, example, layer, head."""

    def __init__(self, path: str | Path, expect_model: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise PipelineError(
                f"attention store not found: {self.path}; run the dump_attention stage first"
            )
        try:
            self._file = pq.ParquetFile(self.path)
        except pa.ArrowException as error:
            raise PipelineError(f"{self.path} is not a readable Parquet file ({error})") from error
        raw = (self._file.schema_arrow.metadata or {}).get(METADATA_KEY)
        if raw is None:
            raise PipelineError(
                f"{self.path} is not an attention store (no {METADATA_KEY.decode()} metadata); "
                "re-run the dump_attention stage"
            )
        self.metadata: dict[str, Any] = json.loads(raw)
        version = self.metadata.get("schema_version")
        if version != SCHEMA_VERSION:
            raise PipelineError(
                f"{self.path} has attention-store schema version {version}, this code reads "
                f"version {SCHEMA_VERSION}; re-run the dump_attention stage to rewrite it"
            )
        if expect_model is not None and self.metadata["model_id"] != expect_model:
            raise PipelineError(
                f"{self.path} holds attention of model '{self.metadata['model_id']}', not "
                f"'{expect_model}'; re-run the dump_attention stage for this model"
            )
        self.num_layers = int(self.metadata["num_layers"])
        self.num_heads = int(self.metadata["num_heads"])
        self.quantize: Quantize = self.metadata["quantize"]
        self.measure: str = self.metadata.get("measure", "weights")  # what the maps hold
        self._index = self._read_index()
        self._tokens: dict[str, dict[int, TokenInfo]] = {}

    def _read_index(self) -> dict[str, np.ndarray]:
        """The id columns of every row, plus its row group and its position inside it."""
        table = self._file.read(columns=list(ID_COLUMNS))
        counts = [
            self._file.metadata.row_group(i).num_rows for i in range(self._file.num_row_groups)
        ]
        index = {name: table.column(name).to_numpy() for name in ("example_id", "layer", "length")}
        for name in ("variant", "task"):
            labels = table.column(name).combine_chunks()  # DictionaryArray
            names = np.asarray(labels.dictionary.to_pylist(), dtype=object)
            index[name] = names[labels.indices.to_numpy()]
        index["row_group"] = np.repeat(np.arange(len(counts)), counts)
        index["position"] = np.concatenate([np.arange(c) for c in [0, *counts]])
        return index

    @property
    def shape(self) -> tuple[int, int]:
        return self.num_layers, self.num_heads

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(self._index["variant"]))

    @property
    def tasks(self) -> list[str]:
        return list(dict.fromkeys(self._index["task"]))

    def _selected(self, variant: str, task: str) -> np.ndarray:
        """Bool [rows]: the rows of (variant, task); a clear error when there are none."""
        chosen = (self._index["variant"] == variant) & (self._index["task"] == task)
        if not chosen.any():
            pairs = sorted(set(zip(self._index["variant"], self._index["task"], strict=True)))
            raise PipelineError(
                f"{self.path} has no attention for variant '{variant}', task '{task}'; "
                f"it holds (variant, task) {pairs}"
            )
        return chosen

    def example_ids(self, variant: str, task: str) -> list[int]:
        chosen = self._selected(variant, task) & (self._index["layer"] == 0)
        return [int(e) for e in self._index["example_id"][chosen]]

    def _check_selection(self, layers: Sequence[int], heads: Sequence[int]) -> None:
        for layer in layers:
            check_head(self.shape, layer, 0)
        for head in heads:
            check_head(self.shape, 0, head)

    def iter_maps(
        self,
        variant: str,
        task: str,
        layers: Sequence[int] | None = None,
        heads: Sequence[int] | None = None,
        examples: Iterable[int] | None = None,
    ) -> Iterator[tuple[int, np.ndarray]]:
        """(example_id, float32 maps [len(layers), len(heads), n, n]) in store order.

        Reads one row group at a time, and only the columns of the chosen heads.
        """
        layers = list(range(self.num_layers)) if layers is None else [int(x) for x in layers]
        heads = list(range(self.num_heads)) if heads is None else [int(x) for x in heads]
        self._check_selection(layers, heads)
        chosen = self._selected(variant, task) & np.isin(self._index["layer"], layers)
        if examples is not None:
            wanted = np.unique(np.fromiter(examples, dtype=np.int64))
            present = np.unique(self._index["example_id"][chosen])
            missing = np.setdiff1d(wanted, present)
            if missing.size:
                raise PipelineError(
                    f"{self.path}: examples {missing[:10].tolist()} are not in the store for "
                    f"variant '{variant}', task '{task}'; see AttentionStore.example_ids"
                )
            chosen &= np.isin(self._index["example_id"], wanted)
        rows = np.flatnonzero(chosen)
        stored_layers = sorted(set(layers))  # each example's rows come in layer order
        reorder = None if layers == stored_layers else [stored_layers.index(x) for x in layers]
        columns = [head_column(h) for h in dict.fromkeys(heads)]
        if self.quantize == "uint8":
            columns += [scale_column(h) for h in dict.fromkeys(heads)]
        for group in np.unique(self._index["row_group"][rows]):
            in_group = rows[self._index["row_group"][rows] == group]
            table = self._file.read_row_group(int(group), columns=columns)
            for example_id, maps in self._decode(table, in_group, heads, len(stored_layers)):
                yield example_id, maps if reorder is None else maps[reorder]

    def _decode(
        self, table: pa.Table, rows: np.ndarray, heads: Sequence[int], num_layers: int
    ) -> Iterator[tuple[int, np.ndarray]]:
        """Assemble the maps of `rows` (global row numbers, whole examples) of one row group."""
        leaves = {}
        for name in table.column_names:
            column = table.column(name).combine_chunks()  # ListArray over the group's rows
            leaves[name] = (column.values.to_numpy(zero_copy_only=False), column.offsets.to_numpy())
        positions = self._index["position"][rows]
        for start in range(0, len(rows), num_layers):
            first = rows[start]
            n = int(self._index["length"][first])
            spots = positions[start : start + num_layers]  # this example's rows in the group
            out = np.empty((num_layers, len(heads), n, n), dtype=np.float32)
            for j, head in enumerate(heads):
                values, offsets = leaves[head_column(head)]
                block = _gather(values, offsets, spots).reshape(num_layers, n, n)
                if self.quantize == "uint8":
                    values, offsets = leaves[scale_column(head)]
                    scale = _gather(values, offsets, spots).reshape(num_layers, n)
                    out[:, j] = dequantize_rows(block, scale)
                else:
                    out[:, j] = block
            yield int(self._index["example_id"][first]), out

    def all_tokens(self, task: str) -> dict[int, TokenInfo]:
        """example_id -> TokenInfo for every example of `task` (any variant)."""
        if task not in self._tokens:
            self._tokens[task] = self._read_tokens(task)
        return self._tokens[task]

    def tokens(self, task: str, example_id: int) -> TokenInfo:
        infos = self.all_tokens(task)
        if example_id not in infos:
            raise PipelineError(f"{self.path}: no example {example_id} for task '{task}'")
        return infos[example_id]

    def _read_tokens(self, task: str) -> dict[int, TokenInfo]:
        first_rows = (self._index["task"] == task) & (self._index["layer"] == 0)
        if not first_rows.any():
            raise PipelineError(f"{self.path} has no task '{task}'; it holds {self.tasks}")
        infos: dict[int, TokenInfo] = {}
        for group in np.unique(self._index["row_group"][first_rows]):
            in_group = first_rows & (self._index["row_group"] == group)
            table = self._file.read_row_group(int(group), columns=list(TOKEN_COLUMNS))
            picked = table.take(pa.array(self._index["position"][in_group])).to_pydict()
            for k, example_id in enumerate(self._index["example_id"][in_group]):
                infos.setdefault(
                    int(example_id),
                    TokenInfo(
                        tokens=picked["tokens"][k],
                        segment_ids=np.asarray(picked["segment_ids"][k], dtype=np.int64),
                        word_ids=np.asarray(picked["word_ids"][k], dtype=np.int64),
                        offsets=np.asarray(picked["offsets"][k], dtype=np.int64).reshape(-1, 2),
                        texts=tuple(picked["texts"][k]),
                    ),
                )
        return dict(sorted(infos.items()))


def _gather(values: np.ndarray, offsets: np.ndarray, spots: np.ndarray) -> np.ndarray:
    """The list elements of rows `spots` (sorted), concatenated; one slice when contiguous."""
    if spots[-1] - spots[0] + 1 == len(spots):
        return values[offsets[spots[0]] : offsets[spots[-1] + 1]]
    return np.concatenate([values[offsets[s] : offsets[s + 1]] for s in spots])
