"""Maps of one attention measure, read the way the analyses read the weights.

The analyses of Kovaleva et al. and Clark et al. read maps [L, H, n, n] whose query rows are
distributions. `measure` chooses what those maps hold:

- `weights`: the attention probabilities alpha[l, h, i, j], as stored or captured;
- `norms`: the value-weighted norms N[l, h, i, j] = ||alpha f_h(x_j)|| (Kobayashi et al.
  2020, pipeline/attention/norms.py), each query row rescaled to sum to 1, i.e. the share of
  the norm of query i's attention output that key j contributes (the dump stores the raw
  norms, in a store of their own beside the weights', see `measure_path`);
- `rollout`: the rollout R_l of the weights (Abnar and Zuidema 2020,
  pipeline/attention/rollout.py), one map per layer, read as a single head ([L, 1, n, n]).

`MeasureStore` gives an attention store's maps in the chosen measure; `measure_maps` turns
one example's captured weights and norms into the chosen measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipeline.attention.rollout import rollout
from pipeline.attention.store import AttentionStore, MapReader
from pipeline.core.errors import PipelineError
from pipeline.core.schema import Measure

if TYPE_CHECKING:
    import torch

MEASURES = tuple(m.value for m in Measure)


def check_measure(measure: str) -> None:
    """Fail in one line on a measure that is not one of MEASURES."""
    if measure not in MEASURES:
        raise PipelineError(f"unknown attention measure '{measure}'; use one of {MEASURES}")


def measure_path(path: str | Path, measure: str) -> Path:
    """Where the dump keeps `measure`: the weights at `path` (<task>/seed<seed>.parquet), a
    captured measure beside it (<task>/seed<seed>.norms.parquet)."""
    path = Path(path)
    return path if measure == "weights" else path.with_name(f"{path.stem}.{measure}{path.suffix}")


def row_shares(maps: np.ndarray) -> np.ndarray:
    """maps [..., n, n] >= 0 with every query row rescaled to sum to 1 (zero rows stay 0)."""
    totals = maps.sum(axis=-1, keepdims=True)  # [..., n, 1]
    return np.divide(maps, totals, out=np.zeros_like(maps), where=totals > 0)


def measure_maps(captured: dict[str, torch.Tensor | np.ndarray], measure: str) -> np.ndarray:
    """One example's maps in `measure` from its captured `weights` (and `norms`), each
    [L, H, n, n]: [L, H, n, n] for weights and norms, [L, 1, n, n] for rollout."""
    check_measure(measure)
    source = "norms" if measure == "norms" else "weights"
    maps = np.asarray(captured[source], dtype=np.float32)
    if measure == "norms":
        return row_shares(maps)
    if measure == "rollout":
        return rollout(maps)[:, None].astype(np.float32)  # [L, 1, n, n]
    return maps


def captured_for(measure: str) -> tuple[str, ...]:
    """The measures the engine must capture to give `measure`."""
    check_measure(measure)
    return ("weights", "norms") if measure == "norms" else ("weights",)


class MeasureStore(MapReader):
    """An attention store read in one measure: the same interface as AttentionStore (tokens,
    example ids, `iter_maps`, `maps`), maps as the module docstring says."""

    def __init__(self, store: AttentionStore, measure: str) -> None:
        check_measure(measure)
        self.weights = store
        self.measure = measure
        self.source = store
        if measure == "norms":
            path = measure_path(store.path, "norms")
            if not path.exists() or AttentionStore(path).measure != "norms":
                raise PipelineError(
                    f"no norms store at {path}; re-run dump_attention with "
                    "dump_attention.measures=[weights,norms]"
                )
            self.source = AttentionStore(path, expect_model=store.metadata["model_id"])
        self.path = self.source.path
        self.metadata = self.source.metadata
        self.num_layers = store.num_layers
        self.num_heads = 1 if measure == "rollout" else store.num_heads

    def __getattr__(self, name: str):
        return getattr(self.weights, name)  # tokens, example ids, variants, tasks

    @property
    def shape(self) -> tuple[int, int]:
        return self.num_layers, self.num_heads

    def iter_maps(
        self,
        variant: str,
        task: str,
        layers: Sequence[int] | None = None,
        heads: Sequence[int] | None = None,
        examples: Iterable[int] | None = None,
    ) -> Iterator[tuple[int, np.ndarray]]:
        """(example_id, float32 maps [len(layers), len(heads), n, n]) in store order."""
        if self.measure == "weights":
            yield from self.source.iter_maps(variant, task, layers, heads, examples)
        elif self.measure == "norms":
            for example_id, maps in self.source.iter_maps(variant, task, layers, heads, examples):
                yield example_id, row_shares(maps)
        else:
            if heads is not None and list(heads) != [0]:
                raise PipelineError(f"rollout has one map per layer (head 0), not heads {heads}")
            chosen = list(range(self.num_layers)) if layers is None else list(layers)
            for example_id, maps in self.source.iter_maps(variant, task, examples=examples):
                yield example_id, measure_maps({"weights": maps}, "rollout")[chosen]


def measure_store(store: AttentionStore, measure: str) -> AttentionStore | MeasureStore:
    """`store` itself for weights, else its maps in `measure` (see MeasureStore)."""
    check_measure(measure)
    return store if measure == "weights" else MeasureStore(store, measure)
