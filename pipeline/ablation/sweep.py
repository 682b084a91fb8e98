"""Head and layer disabling sweeps (Kovaleva et al. 2019, Figs. 8-9), computed fast.

One ablation disables one head, or every head of one layer, through the attention engine
(`HeadControl.disabled`, mode `uniform` or `zero`). Layers below the ablated one are not
changed by it, so the sweep

1. runs each batch once, keeping the hidden states that enter every layer (the cache; it
   is filled chunk by chunk so it stays within `cache_budget_mb`);
2. for each ablation starts from the cached input of its layer and runs only that layer and
   the ones above it, then the classifier;
3. stacks several ablations of the same layer into one pass: the batch is repeated and each
   copy gets its own per-example [B, L, H] mask.

Under the `compile` setting (`compile_settings`) the layers run compiled
(`Layerwise.compile_with`): batch lengths are padded up to a multiple of
`compile.pad_multiple` and the masks are graph inputs, so a layer compiles once per padded
shape, never per batch or per ablation; the padding this costs is logged.

`tests/support/oracles/naive_ablation.py` computes the same logits the slow way (a full eager
forward pass per ablation); tests and `benchmarks/bench_ablate.py` hold the two equal.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from pipeline.attention.engine import HeadControl, Mode, head_mask, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.head_names import head_name, layer_name
from pipeline.core.schema import CompileConfig, TaskConfig
from pipeline.core.stats import (
    Interval,
    benjamini_hochberg,
    bootstrap_interval,
    paired_difference_interval,
    paired_metric_test,
    paired_test,
)
from pipeline.data.batching import length_batches
from pipeline.data.encoding import bucketed_width, collate
from pipeline.models.batched_metrics import batched_metric
from pipeline.models.compilation import log_padding, pad_multiple
from pipeline.models.metrics import predictions_from_logits, task_metrics

log = logging.getLogger(__name__)

Rows = Sequence[dict[str, list[int]]]


def row_lengths(rows: Rows) -> list[int]:
    """The length in word pieces of each encoded row."""
    return [len(row["input_ids"]) for row in rows]


@dataclass(frozen=True)
class Ablation:
    """One head (`head` set) or one whole layer (`head` None) disabled."""

    layer: int
    head: int | None = None

    @property
    def name(self) -> str:
        return layer_name(self.layer) if self.head is None else head_name(self.layer, self.head)

    def mask(self, shape: tuple[int, int]) -> torch.Tensor:
        """bool [L, H], True on the disabled heads; out-of-range heads raise PipelineError."""
        if self.head is None:
            return head_mask(shape, layers=[self.layer])
        return head_mask(shape, heads=[(self.layer, self.head)])


def head_ablations(shape: tuple[int, int]) -> list[Ablation]:
    """Every single head, layer-major: L0H0, L0H1, ..."""
    layers, heads = shape
    return [Ablation(layer, head) for layer in range(layers) for head in range(heads)]


def layer_ablations(shape: tuple[int, int]) -> list[Ablation]:
    """Every whole layer."""
    return [Ablation(layer) for layer in range(shape[0])]


@dataclass(frozen=True)
class SweepResult:
    """Logits of the unablated model and of every ablation, rows in the input order."""

    ablations: list[Ablation]
    baseline: np.ndarray  # [N, C]
    logits: np.ndarray  # [A, N, C]


def plan_chunks(batch_bytes: Sequence[int], budget_bytes: int) -> list[list[int]]:
    """Group consecutive batches so each group's cache fits the budget (at least one batch)."""
    chunks: list[list[int]] = []
    used = budget_bytes + 1
    for index, size in enumerate(batch_bytes):
        if used + size > budget_bytes:
            chunks.append([])
            used = 0
        chunks[-1].append(index)
        used += size
    return chunks


def ablation_passes(ablations: Sequence[Ablation], per_pass: int) -> list[list[int]]:
    """Indices of `ablations` grouped by layer (they start at the same cached state), in
    groups of at most `per_pass`."""
    order = sorted(range(len(ablations)), key=lambda i: ablations[i].layer)
    passes = []
    for _, same_layer in groupby(order, key=lambda i: ablations[i].layer):
        same_layer = list(same_layer)
        passes += [same_layer[i : i + per_pass] for i in range(0, len(same_layer), per_pass)]
    return passes


@torch.no_grad()
def sweep(
    layerwise: Layerwise,
    rows: Rows,
    ablations: Sequence[Ablation],
    *,
    mode: Mode,
    pad_id: int,
    batch_size: int = 32,
    ablations_per_pass: int = 4,
    cache_budget_mb: float = 512,
    progress: bool = True,
    compile_settings: CompileConfig | None = None,
) -> SweepResult:
    """Logits with each ablation applied, over all `rows` (see the module docstring;
    `compile_settings`: the `compile` setting, default eager)."""
    model = layerwise.model
    config = model.config
    shape = model_shape(model)
    masks = torch.stack([a.mask(shape) for a in ablations])  # [A, L, H]
    device = model.device
    itemsize = model.dtype.itemsize

    lengths = row_lengths(rows)
    batches = length_batches(lengths, batch_size)
    multiple = pad_multiple(compile_settings)
    widths = [bucketed_width(max(lengths[i] for i in b), multiple) for b in batches]  # T each
    batch_bytes = [  # the cache of one batch: L hidden states [B, T, D]
        len(b) * width * config.hidden_size * shape[0] * itemsize
        for b, width in zip(batches, widths, strict=True)
    ]
    chunks = plan_chunks(batch_bytes, int(cache_budget_mb * 2**20))
    log.info(
        "ablation sweep: %d ablations x %d examples; layer-input cache %.1f MB in %d chunk(s) "
        "(budget %.0f MB)",
        len(ablations),
        len(rows),
        sum(batch_bytes) / 2**20,
        len(chunks),
        cache_budget_mb,
    )
    passes = ablation_passes(ablations, ablations_per_pass)
    copies = {0} | {len(group) for group in passes}  # 0: the baseline pass, without control
    inputs = {
        (len(b) * max(k, 1), w, k > 0) for b, w in zip(batches, widths, strict=True) for k in copies
    }
    layerwise.compile_with(compile_settings, 2 * len(inputs))  # x2: with a mask, or None
    log_padding("ablation sweep", lengths, batches, multiple)
    baseline = torch.zeros(len(rows), config.num_labels)  # [N, C]
    logits = torch.zeros(len(ablations), len(rows), config.num_labels)  # [A, N, C]

    bar = tqdm(
        total=len(batches) * (1 + len(passes)),
        desc="ablation sweep",
        unit="pass",
        disable=not progress,
    )
    for chunk in chunks:
        cache = []  # per batch of the chunk: (layer inputs L x [B, T, D], mask)
        for b in chunk:
            batch = collate([rows[i] for i in batches[b]], pad_id, device, multiple)
            hidden, mask = layerwise.embed(batch)
            states: list[torch.Tensor] = []
            baseline[batches[b]] = layerwise.logits(hidden, mask, keep=states).cpu()
            cache.append((states, mask))
            bar.update()
        for group in passes:
            for b, (states, mask) in zip(chunk, cache, strict=True):
                out = _stacked_pass(
                    layerwise, states, mask, masks[group], ablations[group[0]].layer, mode
                )
                logits[torch.tensor(group)[:, None], torch.tensor(batches[b])[None, :]] = out
                bar.update()
    bar.close()
    return SweepResult(
        ablations=list(ablations),
        baseline=baseline.numpy(),
        logits=logits.numpy(),
    )


def _stacked_pass(
    layerwise: Layerwise,
    states: list[torch.Tensor],  # L x [B, T, D], the cached inputs of each layer
    mask: torch.Tensor | None,  # [B, 1, T, T]
    disabled: torch.Tensor,  # bool [k, L, H]: k ablations that all start at layer `start`
    start: int,
    mode: Mode,
) -> torch.Tensor:
    """Logits [k, B, C] of k ablations at once: the batch repeated k times, one mask per copy."""
    copies, size = len(disabled), len(states[start])
    hidden = states[start].repeat(copies, 1, 1)  # [k*B, T, D]
    mask = None if mask is None else mask.repeat(copies, 1, 1, 1)  # [k*B, 1, T, T]
    per_example = disabled.repeat_interleave(size, dim=0).to(hidden.device)  # [k*B, L, H]
    control = HeadControl(disabled=per_example, mode=mode, static=layerwise.static)
    out = layerwise.logits(hidden, mask, start, control)  # [k*B, C]
    return out.cpu().reshape(copies, size, -1)


def task_loss(task: TaskConfig, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The summed fine-tuning loss of a batch: cross-entropy, or squared error (regression)."""
    return example_losses(task, logits, labels).sum()


def example_losses(task: TaskConfig, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The fine-tuning loss [N] of each example: cross-entropy, or squared error."""
    if task.is_regression:
        return F.mse_loss(logits[:, 0], labels.float(), reduction="none")
    return F.cross_entropy(logits, labels.long(), reduction="none")


@dataclass(frozen=True)
class Uncertainty:
    """How the sweep's effects are given intervals and tests (pipeline/core/stats.py)."""

    bootstrap_resamples: int = 1000  # paired bootstrap of the examples, per interval
    permutation_resamples: int = 9999  # random swaps of ablated/baseline outputs, per test
    seed: int = 0
    alpha: float = 0.05  # the false discovery rate of `significant`


def sweep_table(
    result: SweepResult, task: TaskConfig, labels: np.ndarray, uncertainty: Uncertainty
) -> pd.DataFrame:
    """One row per ablation: layer, head (-1 for a whole layer), every task metric, the
    baseline of the main metric, `delta` = ablated - baseline (main metric) with its paired
    bootstrap interval `ci_low`..`ci_high`, the p-value of a paired permutation test of
    `delta` and its Benjamini-Hochberg `q_value` (over all heads; over all layers); and the
    mean task loss on the gold labels with `delta_loss`, its interval `loss_ci_low`..
    `loss_ci_high`, `loss_p_value` (sign flips of the per-example loss changes) and
    `loss_q_value`. The loss is finer-grained than the metric on small samples. Every other
    metric m of the task gets its change `delta_<m>` with its paired bootstrap interval
    `ci_low_<m>`..`ci_high_<m>` too (a paper may print its figure in it: Kovaleva et al.'s
    Fig. 8 gives MRPC's in F1)."""
    gold = torch.tensor(labels)  # a copy: frames hand out read-only arrays
    metric = batched_metric(task)
    others = {name: batched_metric(task, name) for name in task.metrics if name != task.main_metric}
    resamples = {"seed": uncertainty.seed, "vectorized": True}
    base_predictions = predictions_from_logits(task, result.baseline)  # [N]
    base_losses = example_losses(task, torch.from_numpy(result.baseline), gold).numpy()  # [N]
    base = task_metrics(task, labels, result.baseline)[task.main_metric]
    records = []
    for ablation, logits in zip(result.ablations, result.logits, strict=True):
        predictions = predictions_from_logits(task, logits)  # [N]
        losses = example_losses(task, torch.from_numpy(logits), gold).numpy()  # [N]
        change = losses - base_losses  # [N]
        delta = paired_difference_interval(
            metric,
            labels,
            base_predictions,
            predictions,
            n_resamples=uncertainty.bootstrap_resamples,
            **resamples,
        )
        delta_loss = bootstrap_interval(
            lambda d: d.mean(axis=-1),
            change,
            n_resamples=uncertainty.bootstrap_resamples,
            **resamples,
        )
        scores = task_metrics(task, labels, logits)
        other_deltas = {}
        for name, other in others.items():
            change_in = paired_difference_interval(
                other,
                labels,
                base_predictions,
                predictions,
                n_resamples=uncertainty.bootstrap_resamples,
                **resamples,
            )
            other_deltas |= {
                f"delta_{name}": change_in.estimate,
                f"ci_low_{name}": change_in.low,
                f"ci_high_{name}": change_in.high,
            }
        records.append(
            {
                "layer": ablation.layer,
                "head": -1 if ablation.head is None else ablation.head,
                **scores,
                "baseline": base,
                "delta": delta.estimate,
                "ci_low": delta.low,
                "ci_high": delta.high,
                "p_value": paired_metric_test(
                    metric,
                    labels,
                    base_predictions,
                    predictions,
                    n_resamples=uncertainty.permutation_resamples,
                    **resamples,
                ),
                "loss": float(losses.mean()),
                "delta_loss": delta_loss.estimate,
                "loss_ci_low": delta_loss.low,
                "loss_ci_high": delta_loss.high,
                "loss_p_value": paired_test(
                    change, n_resamples=uncertainty.permutation_resamples, seed=uncertainty.seed
                ),
                **other_deltas,
            }
        )
    table = pd.DataFrame.from_records(records)
    family = table["head"] < 0  # whole layers; single heads
    for column in ("p_value", "loss_p_value"):
        q_column = column.replace("p_value", "q_value")
        table[q_column] = np.nan
        for members in (family, ~family):
            table.loc[members, q_column] = benjamini_hochberg(table.loc[members, column])
    order = [*table.columns[: table.columns.get_loc("p_value") + 1], "q_value"]
    last = [f"{part}_{name}" for name in others for part in ("delta", "ci_low", "ci_high")]
    return table[order + [c for c in table.columns if c not in order + last] + last]


def baseline_interval(
    result: SweepResult, task: TaskConfig, labels: np.ndarray, uncertainty: Uncertainty
) -> Interval:
    """The unablated model's main metric and its bootstrap interval over the examples."""
    return bootstrap_interval(
        batched_metric(task),
        labels,
        predictions_from_logits(task, result.baseline),
        n_resamples=uncertainty.bootstrap_resamples,
        seed=uncertainty.seed,
        vectorized=True,
    )


def _significant(table: pd.DataFrame, q_column: str, effect: str, alpha: float) -> pd.Series:
    """-1, 0 or +1 per row: the sign of `effect` where `q_column` < alpha, else 0."""
    return np.sign(table[effect]).where(table[q_column] < alpha, 0.0)


def summary(
    heads: pd.DataFrame, layers: pd.DataFrame, task: TaskConfig, alpha: float = 0.05
) -> dict[str, float | int | str]:
    """The Fig. 8/9 headline numbers as flat metrics (deltas in the main metric), from the
    0-based sweep tables; heads and layers are named from 1 (`L3-H5`, `L3`). Removing a head
    (layer) *significantly* helps when its metric change is positive with q < alpha
    (Benjamini-Hochberg over the heads; the layers); `..._lower_loss` / `..._higher_loss`
    count the significant loss changes the same way."""
    best_head = heads.loc[heads["delta"].idxmax()]
    worst_head = heads.loc[heads["delta"].idxmin()]
    best_layer = layers.loc[layers["delta"].idxmax()]
    counts: dict[str, int] = {}
    for kind, table in (("heads", heads), ("layers", layers)):
        on_metric = _significant(table, "q_value", "delta", alpha)
        on_loss = _significant(table, "loss_q_value", "delta_loss", alpha)
        counts |= {
            f"{kind}_significantly_help": int((on_metric > 0).sum()),
            f"{kind}_significantly_hurt": int((on_metric < 0).sum()),
            f"{kind}_significantly_lower_loss": int((on_loss < 0).sum()),
            f"{kind}_significantly_higher_loss": int((on_loss > 0).sum()),
        }
    return {
        "main_metric": task.main_metric,
        "baseline": float(heads["baseline"].iloc[0]),
        "best_head": head_name(best_head["layer"], best_head["head"]),
        "best_head_gain": float(best_head["delta"]),
        "best_head_q_value": float(best_head["q_value"]),
        "worst_head": head_name(worst_head["layer"], worst_head["head"]),
        "worst_head_drop": float(worst_head["delta"]),
        "worst_head_q_value": float(worst_head["q_value"]),
        "share_heads_help": float((heads["delta"] > 0).mean()),
        "share_heads_hurt": float((heads["delta"] < 0).mean()),
        "mean_head_delta": float(heads["delta"].mean()),
        "share_heads_lower_loss": float((heads["delta_loss"] < 0).mean()),
        **counts,
        "best_layer": layer_name(best_layer["layer"]),
        "best_layer_delta": float(best_layer["delta"]),
        "worst_layer_delta": float(layers["delta"].min()),
    }
