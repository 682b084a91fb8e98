"""Every attention map of a batch, captured through the engine in one forward pass, and a
stream of them over many inputs in batches of similar length.

A map is one of the captured measures: `weights` (the attention probabilities alpha) or
`norms` (the value-weighted norms ||alpha f(x)|| of Kobayashi et al., pipeline/attention/norms.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import torch
from tqdm import tqdm
from transformers import PreTrainedModel

from pipeline.attention.engine import HeadControl, model_shape, require_attached
from pipeline.attention.norms import value_grams
from pipeline.core.errors import PipelineError
from pipeline.core.schema import CapturedMeasure
from pipeline.data.batching import length_batches
from pipeline.data.encoding import collate

Encoding = dict[str, list[int]]  # input_ids (and token_type_ids), unpadded
CAPTURED_MEASURES = tuple(m.value for m in CapturedMeasure)


def check_measures(measures: Sequence[str], allowed: Sequence[str] = CAPTURED_MEASURES) -> None:
    """Fail in one line on a measure that is not one of `allowed`."""
    unknown = sorted(set(measures) - set(allowed))
    if unknown or not measures:
        raise PipelineError(f"unknown or no attention measures {unknown}; use some of {allowed}")


@torch.no_grad()
def capture_measures(
    model: PreTrainedModel,
    encodings: Sequence[Encoding],
    pad_id: int,
    measures: Sequence[str] = ("weights",),
    dtype: torch.dtype = torch.float32,
    forward: Callable[..., object] | None = None,
    multiple: int = 1,
) -> dict[str, list[torch.Tensor]]:
    """One forward pass over `encodings`; per measure, per encoding its maps [L, H, n, n] of
    `dtype` on the CPU, cropped to its real length n.

    `model` must be attached to the engine (pipeline.attention.engine.attach). `forward`
    (default `model` itself) runs the pass, e.g. `model` compiled
    (pipeline.models.compilation.compiled), on the batch padded up to a multiple of `multiple`.
    """
    require_attached(model)
    check_measures(measures)
    num_layers, _ = model_shape(model)
    grams = value_grams(model, list(range(num_layers))) if "norms" in measures else None
    control = HeadControl(capture=range(num_layers), value_grams=grams)
    batch = collate(list(encodings), pad_id, model.device, multiple)  # input_ids etc. [B, T]
    (forward or model)(**batch, head_control=control)
    recorded = {"weights": control.maps, "norms": control.norms}
    lengths = [len(e["input_ids"]) for e in encodings]
    captured = {}
    for measure in measures:
        layers = recorded[measure]
        maps = torch.stack([layers[layer] for layer in range(num_layers)], dim=1)  # [B,L,H,T,T]
        maps = maps.to(dtype).cpu()
        captured[measure] = [m[..., :n, :n] for m, n in zip(maps, lengths, strict=True)]
    return captured


def capture_maps(
    model: PreTrainedModel,
    encodings: Sequence[Encoding],
    pad_id: int,
    dtype: torch.dtype = torch.float32,
) -> list[torch.Tensor]:
    """The attention weights of `capture_measures`: per encoding [L, H, n, n]."""
    return capture_measures(model, encodings, pad_id, ("weights",), dtype)["weights"]


def stream_measures(
    model: PreTrainedModel,
    encodings: Sequence[Encoding],
    batch_size: int,
    pad_id: int,
    measures: Sequence[str] = ("weights",),
    desc: str = "attention",
) -> Iterator[tuple[int, dict[str, torch.Tensor]]]:
    """(index, {measure: maps float [L, H, n, n]}) for every encoding, in batches of similar
    length.

    The model must be attached to the engine (pipeline.attention.engine.attach). Examples come in
    length order, not input order; the index says which one each is.
    """
    lengths = [len(encoding["input_ids"]) for encoding in encodings]
    for chosen in tqdm(length_batches(lengths, batch_size), desc=desc, unit="batch"):
        captured = capture_measures(model, [encodings[i] for i in chosen], pad_id, measures)
        for position, index in enumerate(chosen):
            yield index, {measure: maps[position] for measure, maps in captured.items()}


def stream_maps(
    model: PreTrainedModel,
    encodings: Sequence[Encoding],
    batch_size: int,
    pad_id: int,
    desc: str = "attention",
) -> Iterator[tuple[int, torch.Tensor]]:
    """(index, weights float [L, H, n, n]) for every encoding, in batches of similar length
    (see `stream_measures`)."""
    for index, captured in stream_measures(model, encodings, batch_size, pad_id, desc=desc):
        yield index, captured["weights"]
