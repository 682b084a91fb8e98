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
pipeline/attention/measures.py). This module holds the format and the reader
(`AttentionStore`); the writer, pipeline/attention/store_writer.py, writes under a temporary
name and renames at the end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.errors import PipelineError
from pipeline.core.head_names import check_head
from pipeline.core.layout import attention_store

SCHEMA_VERSION = 1
METADATA_KEY = b"dark_secrets.attention"
ID_COLUMNS = ("variant", "task", "example_id", "layer", "length")
TOKEN_COLUMNS = ("tokens", "segment_ids", "word_ids", "offsets", "texts")
Quantize = Literal["none", "uint8"]
QUANTIZE_MODES = ("none", "uint8")


def store_path(root: Path, task: str, seed: int) -> Path:
    """The dump of `task` made with the model fine-tuned with `seed` (its pre-trained maps
    beside the fine-tuned ones): <root>/<task>/seed<seed>.parquet."""
    return attention_store(root, task, seed)


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


def dequantize_rows(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """float32 maps [..., n, n] from codes [..., n, n] and row scales [..., n]."""
    return codes.astype(np.float32) * (scale.astype(np.float32) / 255)[..., None]


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
