"""Head pruning with stochastic hard-concrete gates and an L0 penalty (Voita et al. 2019, after
Louizos et al. 2018), on a frozen fine-tuned classifier.

Each head h gets a gate z_h that multiplies its output (the engine's `HeadControl.gate`).
z_h follows the hard concrete distribution with a learned log_alpha_h, temperature
beta = 2/3 and stretch (gamma, zeta) = (-0.1, 1.1):

    u ~ U(0, 1),   s = sigmoid((log u - log(1 - u) + log_alpha) / beta)
    z = min(1, max(0, s (zeta - gamma) + gamma))

so z is exactly 0 or 1 with non-zero probability. The L0 penalty is the expected number of
open gates,

    L_C = sum_h P(z_h != 0) = sum_h sigmoid(log_alpha_h - beta log(-gamma / zeta)),

and the gates are fitted on training rows by minimising mean task loss + lambda L_C over
log_alpha only (the model's weights are frozen). At evaluation the gates are deterministic
(Louizos et al.'s test-time estimator) z^_h = min(1, max(0, sigmoid(log_alpha_h)
(zeta - gamma) + gamma)), and head h is kept when z^_h > 0.5; a pruned head's output is
multiplied by 0 (Michel et al.'s `zero` mode), kept heads by 1, so the metric against heads
kept lies on the same axes as Michel et al.'s gradient pruning curve.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
from scipy import stats
from torch import nn

from pipeline.ablation.importance import gated_logits
from pipeline.ablation.sweep import Rows, row_lengths, task_loss
from pipeline.analyses.gates.settings import GatesConfig
from pipeline.attention.engine import HeadControl, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.schema import TaskConfig
from pipeline.core.stats import bootstrap_interval
from pipeline.data.batching import length_batches
from pipeline.data.encoding import collate
from pipeline.models.batched_metrics import batched_metric
from pipeline.models.metrics import predictions_from_logits, task_metrics

BETA = 2 / 3
GAMMA, ZETA = -0.1, 1.1
KEEP_THRESHOLD = 0.5


class HardConcrete(nn.Module):
    """One hard-concrete gate per head: log_alpha [L, H]."""

    def __init__(self, shape: tuple[int, int], init_log_alpha: float) -> None:
        super().__init__()
        self.log_alpha = nn.Parameter(torch.full(shape, float(init_log_alpha)))

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """One draw of every gate, z [L, H] in [0, 1], differentiable in log_alpha."""
        u = torch.rand(self.log_alpha.shape, generator=generator).clamp(1e-6, 1 - 1e-6)
        u = u.to(self.log_alpha.device)
        s = torch.sigmoid((u.log() - (-u).log1p() + self.log_alpha) / BETA)
        return (s * (ZETA - GAMMA) + GAMMA).clamp(0.0, 1.0)

    def prob_open(self) -> torch.Tensor:
        """P(z_h != 0) for every head, [L, H]."""
        return torch.sigmoid(self.log_alpha - BETA * math.log(-GAMMA / ZETA))

    def l0_penalty(self) -> torch.Tensor:
        """L_C = sum_h P(z_h != 0), a scalar."""
        return self.prob_open().sum()

    @torch.no_grad()
    def deterministic(self) -> torch.Tensor:
        """The test-time gates z^ [L, H]."""
        return (torch.sigmoid(self.log_alpha) * (ZETA - GAMMA) + GAMMA).clamp(0.0, 1.0)

    def kept(self) -> torch.Tensor:
        """bool [L, H]: heads whose test-time gate exceeds KEEP_THRESHOLD."""
        return self.deterministic() > KEEP_THRESHOLD


def fit_gates(
    layerwise: Layerwise,
    rows: Rows,
    labels: np.ndarray,  # [N] gold labels
    task: TaskConfig,
    *,
    l0_lambda: float,
    settings: GatesConfig,
    pad_id: int,
    seed: int,
) -> HardConcrete:
    """Gates fitted by Adam on mean task loss + l0_lambda * L_C over `settings.steps` batches
    of `rows` (length-batched, in a seeded random order); the model stays frozen."""
    model = layerwise.model
    gates = HardConcrete(model_shape(model), settings.init_log_alpha).to(model.device)
    optimiser = torch.optim.Adam(gates.parameters(), lr=settings.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    batches = length_batches(row_lengths(rows), settings.batch_size)
    frozen = [p for p in model.parameters() if p.requires_grad]
    for parameter in frozen:
        parameter.requires_grad_(False)
    try:
        for step in range(settings.steps):
            if step % len(batches) == 0:
                order = rng.permutation(len(batches))
            chosen = batches[order[step % len(batches)]]
            batch = collate([rows[i] for i in chosen], pad_id, model.device)
            gold = torch.as_tensor(labels[chosen], device=model.device)
            with torch.enable_grad():
                hidden, mask = layerwise.embed(batch)
                logits = layerwise.logits(
                    hidden, mask, control=HeadControl(gate=gates.sample(generator))
                )
                loss = task_loss(task, logits, gold) / len(chosen) + l0_lambda * gates.l0_penalty()
                optimiser.zero_grad()
                loss.backward()
            optimiser.step()
    finally:
        for parameter in frozen:
            parameter.requires_grad_(True)
    return gates


def gate_sweep(
    layerwise: Layerwise,
    train: tuple[Rows, np.ndarray],
    dev: tuple[Rows, np.ndarray],
    task: TaskConfig,
    settings: GatesConfig,
    *,
    pad_id: int,
    seed: int,
    bootstrap_resamples: int = 1000,
) -> tuple[pd.DataFrame, dict[float, np.ndarray]]:
    """(curve, kept): per lambda of `settings.lambdas` one row with l0_lambda, heads_kept,
    every task metric on the dev rows with the pruned heads gated to 0, and the main
    metric's bootstrap interval (ci_low, ci_high); and the kept heads, bool [L, H], per lambda."""
    (train_rows, train_labels), (dev_rows, dev_labels) = train, dev
    records, kept = [], {}
    for l0_lambda in settings.lambdas:
        gates = fit_gates(
            layerwise, train_rows, train_labels, task,
            l0_lambda=l0_lambda, settings=settings, pad_id=pad_id, seed=seed,
        )  # fmt: skip
        keep = gates.kept().cpu()
        logits = gated_logits(
            layerwise, dev_rows, ~keep, pad_id=pad_id, batch_size=settings.batch_size
        )
        interval = bootstrap_interval(
            batched_metric(task), dev_labels, predictions_from_logits(task, logits),
            n_resamples=bootstrap_resamples, seed=seed, vectorized=True,
        )  # fmt: skip
        kept[float(l0_lambda)] = keep.numpy()
        records.append(
            {
                "l0_lambda": float(l0_lambda),
                "heads_kept": int(keep.sum()),
                **task_metrics(task, dev_labels, logits),
                "ci_low": interval.low,
                "ci_high": interval.high,
            }
        )
    return pd.DataFrame.from_records(records), kept


def top_heads(importance: np.ndarray, count: int) -> np.ndarray:
    """bool [L, H]: the `count` heads of highest importance (ties: lower index first)."""
    order = np.argsort(-importance.ravel(), kind="stable")
    chosen = np.zeros(importance.size, dtype=bool)
    chosen[order[:count]] = True
    return chosen.reshape(importance.shape)


def jaccard(first: np.ndarray, second: np.ndarray) -> float:
    """|A & B| / |A | B| of two bool masks (1 when both are empty)."""
    union = int((first | second).sum())
    return float((first & second).sum() / union) if union else 1.0


def random_jaccard(total: int, count: int) -> float:
    """Expected Jaccard index of two independent random `count`-subsets of `total` items:
    E[I / (2 count - I)] with I ~ Hypergeometric(total, count, count)."""
    if count == 0:
        return 1.0
    overlap = np.arange(max(0, 2 * count - total), count + 1)
    probability = stats.hypergeom(total, count, count).pmf(overlap)
    return float((probability * overlap / (2 * count - overlap)).sum())


def kept_overlap(kept: dict[float, np.ndarray], importance: np.ndarray) -> pd.DataFrame:
    """Per lambda: l0_lambda, heads_kept, and the Jaccard index between the heads the gates keep
    and the same number of heads of highest gradient importance (Michel et al., importance
    [L, H]), beside its expectation for random subsets (jaccard_random)."""
    records = []
    for l0_lambda, keep in kept.items():
        count = int(keep.sum())
        records.append(
            {
                "l0_lambda": l0_lambda,
                "heads_kept": count,
                "jaccard": jaccard(keep, top_heads(importance, count)),
                "jaccard_random": random_jaccard(keep.size, count),
            }
        )
    return pd.DataFrame.from_records(records)


def kept_heads_table(kept: dict[float, np.ndarray]) -> pd.DataFrame:
    """Long table of the kept heads per lambda: l0_lambda, layer, head, kept (0-based)."""
    frames = []
    for l0_lambda, keep in kept.items():
        layers, heads = np.indices(keep.shape)
        frames.append(
            pd.DataFrame(
                {
                    "l0_lambda": l0_lambda,
                    "layer": layers.ravel(),
                    "head": heads.ravel(),
                    "kept": keep.ravel().astype(int),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
