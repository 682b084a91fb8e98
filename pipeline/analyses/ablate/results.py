"""What the ablate stage writes that others read: per task and fine-tuning seed, the
unablated model's score on the ablation rows, every head's and layer's removal, the pruning
curve and the rows themselves (metrics/ablate/<task>/seed<N>.json, plots/ablate/<task>/
seed<N>/*.csv)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.core.results import Covers, Metrics, Table
from pipeline.core.stats import Interval


@dataclass(frozen=True)
class AblateMetrics(Metrics):
    stage = "ablate"
    covers = Covers.TASK_SEED

    num_examples: float  # the ablation rows
    baseline: Interval  # the unablated model's main metric on them
    main_metric: str | None = None  # the task's main metric (older runs: accuracy)


@dataclass(frozen=True, eq=False)
class Removals(Table):
    """One removal per row (a head, or a layer): the main metric's change, its paired
    interval and its Benjamini-Hochberg q-value."""

    stage = "ablate"
    covers = Covers.TASK_SEED

    delta: pd.Series
    ci_low: pd.Series
    ci_high: pd.Series
    q_value: pd.Series


@dataclass(frozen=True, eq=False)
class HeadRemovals(Removals):
    name = "heads"


@dataclass(frozen=True, eq=False)
class LayerRemovals(Removals):
    name = "layers"


@dataclass(frozen=True, eq=False)
class Pruning(Table):
    """The pruning curve: per step, the share of heads pruned by importance and the main
    metric's change from the unpruned model with its paired interval."""

    stage = "ablate"
    covers = Covers.TASK_SEED
    name = "pruning"

    fraction_pruned: pd.Series
    delta: pd.Series
    delta_ci_low: pd.Series
    delta_ci_high: pd.Series


@dataclass(frozen=True, eq=False)
class AblationRows(Table):
    """The dev rows the ablations score, with their gold label."""

    stage = "ablate"
    covers = Covers.TASK_SEED
    name = "examples"

    label: pd.Series
