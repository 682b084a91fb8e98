"""How heads are named for people: numbered from 1, as both papers do.

Python APIs (the engine, the store, in-memory tables) keep 0-based `layer`/`head` indices;
every human-facing output (written tables, label files, metrics, figures, the report) counts
from 1: layer l, head h is `L{l+1}-H{h+1}`, and written `layer`/`head` columns hold l+1, h+1.
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.errors import PipelineError


def head_name(layer: int, head: int) -> str:
    """0-based (layer 2, head 4) -> 'L3-H5'."""
    return f"L{int(layer) + 1}-H{int(head) + 1}"


def layer_name(layer: int) -> str:
    """0-based layer 2 -> 'L3'."""
    return f"L{int(layer) + 1}"


def numbered_from_one(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of `table` whose `layer` and `head` columns (those present) count from 1."""
    shifted = {c: table[c] + 1 for c in ("layer", "head") if c in table}
    return table.assign(**shifted)


def check_head(shape: tuple[int, int], layer: int, head: int) -> None:
    """Raise a one-line error when 0-based (layer, head) lies outside a model of `shape`."""
    num_layers, num_heads = shape
    if not (0 <= layer < num_layers and 0 <= head < num_heads):
        raise PipelineError(
            f"layer {layer}, head {head} is out of range: the model has {num_layers} layers "
            f"x {num_heads} heads (0-based)"
        )
