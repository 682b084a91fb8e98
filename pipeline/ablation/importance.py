"""Gradient head importance and iterative head pruning (Michel et al. 2019, Sec. 4).

Every head's output is multiplied by a gate xi_h (`HeadControl.gate`; 1 = kept, 0 =
pruned, i.e. the `zero` mode). The importance of head h is

    I_h = sum over examples x of | dL(x) / d xi_h |

with L the task loss (cross-entropy, or squared error for regression) on gold labels. Each
example gets its own gate tensor ([B, L, H], all ones), so one backward pass gives the
per-example gradients whose absolute values are summed. Scores are then divided by their
l2 norm within each layer (Michel et al.'s layer-wise normalisation).

The pruning curve starts from the full model and repeatedly removes the `step` fraction
(of all heads) that is least important among the remaining ones, recomputing importance
with the pruned heads gated to 0 after every removal, until no head is left. Importance is
scored on its own examples (Michel et al. use training data) and the metric measured on the
evaluation rows; when both are the same rows, the forward pass that gives the gradients
also gives the pruned model's logits.

Under the `compile` setting the layers run compiled (`Layerwise.compile_with`), batches
padded to a multiple of `compile.pad_multiple`; the gates are graph inputs, so pruning more
heads never recompiles, and the backward pass runs through the same graphs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from pipeline.ablation.sweep import Rows, Uncertainty, row_lengths, task_loss
from pipeline.attention.engine import HeadControl, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.schema import CompileConfig, TaskConfig
from pipeline.core.stats import bootstrap_interval, paired_difference_interval
from pipeline.data.batching import length_batches
from pipeline.data.encoding import bucketed_width, collate
from pipeline.models.batched_metrics import batched_metric
from pipeline.models.compilation import log_padding, pad_multiple
from pipeline.models.metrics import predictions_from_logits, task_metrics


@dataclass(frozen=True)
class Importance:
    """Raw importance sums and the pruned model's logits from the same passes."""

    scores: np.ndarray  # [L, H], sum over examples of |dL/dxi_h|
    logits: np.ndarray  # [N, C], with the pruned heads gated to 0


def head_importance(
    layerwise: Layerwise,
    rows: Rows,
    labels: np.ndarray,  # [N] gold labels
    task: TaskConfig,
    *,
    pad_id: int,
    pruned: torch.Tensor | None = None,  # bool [L, H], gated to 0
    batch_size: int = 32,
) -> Importance:
    """I_h (unnormalised) for every head, with `pruned` heads switched off."""
    model = layerwise.model
    shape = model_shape(model)
    pruned = torch.zeros(shape, dtype=torch.bool) if pruned is None else pruned
    keep = (~pruned).to(model.dtype).to(model.device)  # [L, H]
    scores = torch.zeros(shape, dtype=torch.float64)
    logits = torch.zeros(len(rows), task.num_labels)  # [N, C]
    for chosen in length_batches(row_lengths(rows), batch_size):
        batch = collate([rows[i] for i in chosen], pad_id, model.device, layerwise.multiple)
        gold = torch.as_tensor(labels[chosen], device=model.device)
        gate = keep.expand(len(chosen), *shape).clone().requires_grad_(True)  # [B, L, H]
        with torch.enable_grad():
            hidden, mask = layerwise.embed(batch)
            control = HeadControl(gate=gate, static=layerwise.static)
            out = layerwise.logits(hidden, mask, control=control)  # [B, C]
            (grad,) = torch.autograd.grad(task_loss(task, out, gold), gate)  # [B, L, H]
        scores += grad.abs().sum(0).double().cpu()
        logits[chosen] = out.detach().cpu()
    return Importance(scores=scores.numpy(), logits=logits.numpy())


@torch.no_grad()
def gated_logits(
    layerwise: Layerwise, rows: Rows, pruned: torch.Tensor, *, pad_id: int, batch_size: int
) -> np.ndarray:
    """Logits [N, C] with the `pruned` heads (bool [L, H]) gated to 0."""
    model = layerwise.model
    gate = (~pruned).to(model.dtype).to(model.device)  # [L, H]
    logits = torch.zeros(len(rows), model.config.num_labels)  # [N, C]
    for chosen in length_batches(row_lengths(rows), batch_size):
        batch = collate([rows[i] for i in chosen], pad_id, model.device, layerwise.multiple)
        hidden, mask = layerwise.embed(batch)
        control = HeadControl(gate=gate, static=layerwise.static)
        logits[chosen] = layerwise.logits(hidden, mask, control=control).cpu()
    return logits.numpy()


def _compile_for(
    layerwise: Layerwise,
    row_sets: list[Rows],
    batch_size: int,
    settings: CompileConfig | None,
) -> None:
    """Compile `layerwise` (under `settings`) for the batches of `row_sets`, and log their
    padding."""
    multiple = pad_multiple(settings)
    inputs = set()
    for rows in row_sets:
        lengths = row_lengths(rows)
        batches = length_batches(lengths, batch_size)
        inputs |= {(len(b), bucketed_width(max(lengths[i] for i in b), multiple)) for b in batches}
        log_padding("head importance", lengths, batches, multiple)
    # x4: with an attention mask or None, with gradients (importance) or without (logits)
    layerwise.compile_with(settings, 4 * len(inputs))


def normalise_per_layer(scores: np.ndarray, pruned: np.ndarray | None = None) -> np.ndarray:
    """Scores [L, H] divided by the l2 norm of their layer, over the heads not yet pruned
    (pruned heads get 0; a layer whose scores are all 0 stays 0)."""
    kept = scores if pruned is None else np.where(pruned, 0.0, scores)
    norms = np.linalg.norm(kept, axis=1, keepdims=True)  # [L, 1]
    return np.divide(kept, norms, out=np.zeros_like(kept, dtype=float), where=norms > 0)


def pruning_schedule(total: int, step: float) -> list[int]:
    """Numbers of heads pruned at each point: round(k * step * total), k = 0.. until all."""
    points = math.ceil(round(1 / step, 9))
    return sorted({min(total, round(k * step * total)) for k in range(points + 1)} | {total})


def least_important(normalised: np.ndarray, pruned: np.ndarray, count: int) -> np.ndarray:
    """bool [L, H]: the `count` remaining heads of lowest score (ties: lower index first)."""
    order = np.argsort(np.where(pruned, np.inf, normalised).ravel(), kind="stable")
    chosen = np.zeros(normalised.size, dtype=bool)
    chosen[order[:count]] = True
    return chosen.reshape(normalised.shape)


def pruning_curve(
    layerwise: Layerwise,
    rows: Rows,
    labels: np.ndarray,
    task: TaskConfig,
    *,
    pad_id: int,
    step: float = 0.1,
    batch_size: int = 32,
    scoring: tuple[Rows, np.ndarray] | None = None,
    uncertainty: Uncertainty | None = None,
    progress: bool = True,
    compile_settings: CompileConfig | None = None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """(curve, first importance): one row per point with heads_pruned, fraction_pruned,
    every task metric on `rows`, the main metric's bootstrap interval over the examples
    (`ci_low`, `ci_high`), `delta` (main metric - unpruned) with its paired interval
    (`delta_ci_low`, `delta_ci_high`: the same rows pruned and unpruned); and the full model's
    normalised importance [L, H]. Importance is computed on `scoring` (rows, labels), e.g.
    training examples as Michel et al. do, or on `rows` themselves when it is None.
    `compile_settings`: the `compile` setting, default eager."""
    score_rows, score_labels = scoring if scoring is not None else (rows, labels)
    row_sets = [score_rows] if scoring is None else [score_rows, rows]
    _compile_for(layerwise, row_sets, batch_size, compile_settings)
    uncertainty = uncertainty or Uncertainty()
    shape = model_shape(layerwise.model)
    total = shape[0] * shape[1]
    schedule = pruning_schedule(total, step)
    pruned = np.zeros(shape, dtype=bool)
    records: list[dict] = []
    first: np.ndarray | None = None  # importance of the full model [L, H]
    unpruned: np.ndarray | None = None  # the full model's predictions [N]
    for count, following in tqdm(
        zip(schedule, [*schedule[1:], None], strict=True),
        total=len(schedule),
        desc="pruning curve",
        disable=not progress,
    ):
        off = torch.from_numpy(pruned)
        result = head_importance(
            layerwise, score_rows, score_labels, task, pad_id=pad_id, pruned=off,
            batch_size=batch_size,
        )  # fmt: skip
        logits = (
            result.logits
            if scoring is None
            else gated_logits(layerwise, rows, off, pad_id=pad_id, batch_size=batch_size)
        )
        scores = normalise_per_layer(result.scores, pruned)
        first = scores if first is None else first
        predictions = predictions_from_logits(task, logits)
        unpruned = predictions if unpruned is None else unpruned
        resampling = {
            "n_resamples": uncertainty.bootstrap_resamples,
            "seed": uncertainty.seed,
            "vectorized": True,
        }
        interval = bootstrap_interval(batched_metric(task), labels, predictions, **resampling)
        change = paired_difference_interval(
            batched_metric(task), labels, unpruned, predictions, **resampling
        )
        records.append(
            {
                "heads_pruned": count,
                "fraction_pruned": count / total,
                **task_metrics(task, labels, logits),
                "ci_low": interval.low,
                "ci_high": interval.high,
                "delta_ci_low": change.low,
                "delta_ci_high": change.high,
            }
        )
        if following is not None:
            pruned |= least_important(scores, pruned, following - count)
    curve = pd.DataFrame.from_records(records)
    delta = curve[task.main_metric] - curve[task.main_metric].iloc[0]
    curve.insert(curve.columns.get_loc("delta_ci_low"), "delta", delta)
    return curve, first


def importance_table(normalised: np.ndarray) -> pd.DataFrame:
    """Long table: layer, head, importance."""
    layers, heads = np.indices(normalised.shape)
    return pd.DataFrame(
        {"layer": layers.ravel(), "head": heads.ravel(), "importance": normalised.ravel()}
    )


def prunable_fraction(curve: pd.DataFrame, metric: str, keep: float) -> float:
    """The largest fraction pruned whose `metric` stays within (1 - keep) x |unpruned| of
    the unpruned model's."""
    start = curve[metric].iloc[0]
    floor = start - (1 - keep) * abs(start)
    return float(curve.loc[curve[metric] >= floor, "fraction_pruned"].max())


def metric_near_fraction(curve: pd.DataFrame, metric: str, fraction: float) -> float:
    """`metric` at the curve's point whose fraction pruned is closest to `fraction`."""
    return float(curve.loc[(curve["fraction_pruned"] - fraction).abs().idxmin(), metric])
