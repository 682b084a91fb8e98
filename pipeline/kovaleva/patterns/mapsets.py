"""Map sets: attention maps with their word pieces, keyed by a map id, in one `.npz` file.

The format that the labelled set ships in (`data/annotations/<model>/maps.npz`) and that
`python -m tools.patterns_classify` reads: for every map id `<id>`,

    map_<id>     float array [n, n]: one head's attention (rows: queries, columns: keys)
    tokens_<id>  the n word pieces as strings, [CLS] first, [SEP] closing each sentence

Labels refer to these exact maps (what the annotators saw), so a labelled set stays valid
when the dumps are recomputed. `read_map_set` checks every entry and fails in one line
naming the id and what is wrong; `write_map_set` writes atomically.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.core.errors import PipelineError
from pipeline.core.io import atomic_path

MAP_PREFIX, TOKENS_PREFIX = "map_", "tokens_"
ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class LabelledMap:
    """One map float32 [n, n] and its n word pieces."""

    weights: np.ndarray
    tokens: tuple[str, ...]


def check_map(map_id: str, weights: np.ndarray, tokens: tuple[str, ...], where: str) -> None:
    """Fail in one line if `weights` is not a square float map whose size is `len(tokens)`."""
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1]:
        raise PipelineError(
            f"{where}: map_{map_id} has shape {list(weights.shape)}; a map is square [n, n]"
        )
    if not np.issubdtype(weights.dtype, np.floating):
        raise PipelineError(f"{where}: map_{map_id} holds {weights.dtype}; give float weights")
    if len(tokens) != weights.shape[0]:
        raise PipelineError(
            f"{where}: tokens_{map_id} has {len(tokens)} word pieces but map_{map_id} is "
            f"{weights.shape[0]} x {weights.shape[0]}; give one word piece per row"
        )
    if not np.isfinite(weights).all():
        raise PipelineError(f"{where}: map_{map_id} holds NaN or infinite weights")


def read_map_set(path: Path) -> dict[str, LabelledMap]:
    """id -> map of an `.npz` map set, in the file's order, every entry checked."""
    if not path.exists():
        raise PipelineError(f"map set not found: {path}")
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise PipelineError(f"{path}: not a readable .npz file ({error})") from None
    with archive:
        keys = list(archive.keys())
        ids = [k.removeprefix(MAP_PREFIX) for k in keys if k.startswith(MAP_PREFIX)]
        strays = [k for k in keys if not k.startswith((MAP_PREFIX, TOKENS_PREFIX))]
        if strays:
            raise PipelineError(
                f"{path}: key '{strays[0]}' is neither map_<id> nor tokens_<id>; "
                "name every entry map_<id> or tokens_<id>"
            )
        if not ids:
            raise PipelineError(f"{path}: holds no map_<id> entries")
        out = {}
        for map_id in ids:
            if f"{TOKENS_PREFIX}{map_id}" not in archive:
                raise PipelineError(f"{path}: map_{map_id} has no tokens_{map_id}; add its tokens")
            weights = archive[f"{MAP_PREFIX}{map_id}"]
            tokens = tuple(str(t) for t in np.atleast_1d(archive[f"{TOKENS_PREFIX}{map_id}"]))
            check_map(map_id, weights, tokens, str(path))
            out[map_id] = LabelledMap(weights.astype(np.float32), tokens)
        orphans = [
            k for k in keys if k.startswith(TOKENS_PREFIX) and k[len(TOKENS_PREFIX) :] not in out
        ]
        if orphans:
            raise PipelineError(f"{path}: {orphans[0]} has no map; add its map_<id> or drop it")
    return out


def write_map_set(path: Path, maps: Mapping[str, LabelledMap]) -> None:
    """Write `maps` as a compressed `.npz` map set (weights as float16), atomically."""
    arrays = {}
    for map_id, entry in maps.items():
        if not ID_PATTERN.fullmatch(map_id):
            raise PipelineError(f"map id '{map_id}': use letters, digits, '_', '.' or '-'")
        check_map(map_id, entry.weights, entry.tokens, str(path))
        arrays[f"{MAP_PREFIX}{map_id}"] = entry.weights.astype(np.float16)
        arrays[f"{TOKENS_PREFIX}{map_id}"] = np.asarray(entry.tokens, dtype=str)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez_compressed(handle, **arrays)
