"""The gates stage's work for one task: Voita et al.'s hard-concrete gate sweep beside Michel et
al.'s gradient pruning curve, and the overlap of the heads the two methods keep.

`gates_task` fits gates for every lambda (gates.py) on a seeded sample of train rows and
evaluates them on a seeded sample of dev rows: the ablate stage's rows (`dev_rows`, the
ablate group's count for the task, and the same seed). Michel et al.'s curve and head
importance come from the ablate stage's tables (pruning.csv, importance.csv) when given,
else they are computed here (importance.py, scored on the same train rows). The ablate
stage's curve must start from the full model's metric on the same dev rows, or the stage
stops (the tables are stale: re-run ablate). Tables and metrics number layers and heads from 1.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.ablation.importance import gated_logits, pruning_curve
from pipeline.ablation.sweep import Uncertainty
from pipeline.analyses.gates.settings import GatesConfig
from pipeline.attention.engine import attach, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.errors import PipelineError
from pipeline.core.head_names import numbered_from_one
from pipeline.core.schema import TaskConfig
from pipeline.data.sampling import evaluation_sample
from pipeline.models.labelled import labelled_rows
from pipeline.models.metrics import task_metrics
from pipeline.voita.hard_concrete import gate_sweep, kept_heads_table, kept_overlap

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GatesResult:
    """What `gates_task` gives the stage to write; layers and heads numbered from 1."""

    curve: pd.DataFrame  # per lambda: l0_lambda, heads_kept, task metrics, ci_low, ci_high
    curves: pd.DataFrame  # method (gates | gradient), heads_kept, metric, ci_low, ci_high
    overlap: pd.DataFrame  # per lambda: l0_lambda, heads_kept, jaccard, jaccard_random
    kept: pd.DataFrame  # per lambda and head: l0_lambda, layer, head, kept
    metrics: dict[str, float | int | str]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem."""
        return {"gates": self.curve, "curves": self.curves, "overlap": self.overlap,
                "kept": self.kept}  # fmt: skip


@dataclass(frozen=True)
class MichelCurve:
    """Michel et al.'s pruning curve (pruning.csv's columns) and first importance [L, H]."""

    pruning: pd.DataFrame
    importance: np.ndarray


def michel_from_tables(pruning: pd.DataFrame, importance: pd.DataFrame) -> MichelCurve:
    """The ablate stage's pruning.csv and importance.csv (layers and heads from 1)."""
    grid = importance.pivot_table(index="layer", columns="head", values="importance")
    return MichelCurve(pruning, grid.sort_index().sort_index(axis=1).to_numpy())


def gates_task(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    task: TaskConfig,
    dev: pd.DataFrame,
    train: pd.DataFrame,
    settings: GatesConfig,
    michel: MichelCurve | None,
    *,
    dev_rows: int | None,
    max_length: int,
    seed: int,
) -> GatesResult:
    """The gate sweep of `model` (fine-tuned on `task`, on its device) next to Michel et al.'s
    curve (`michel`, or computed here when None), on `dev_rows` rows of `dev` (None: all)."""
    layerwise = Layerwise.of(attach(model))
    pad_id = tokenizer.pad_token_id
    evaluated = labelled_rows(
        tokenizer, task, evaluation_sample(dev, task, dev_rows, seed), max_length,
        f"{task.name} {task.eval_split}",
    )  # fmt: skip
    train_rows = labelled_rows(
        tokenizer, task, evaluation_sample(train, task, settings.train_examples, seed),
        max_length, f"{task.name} train",
    )  # fmt: skip
    started = time.perf_counter()
    curve, kept = gate_sweep(
        layerwise,
        (train_rows.rows, train_rows.labels),
        (evaluated.rows, evaluated.labels),
        task,
        settings,
        pad_id=pad_id,
        seed=seed,
    )
    log.info(
        "%s: %d lambdas in %.1f s", task.name, len(settings.lambdas), time.perf_counter() - started
    )
    if michel is not None:
        full = gated_logits(
            layerwise, evaluated.rows, torch.zeros(model_shape(model), dtype=torch.bool),
            pad_id=pad_id,
            batch_size=settings.batch_size,
        )  # fmt: skip
        check_same_start(michel.pruning, task_metrics(task, evaluated.labels, full), task)
    else:
        pruning, importance = pruning_curve(
            layerwise, evaluated.rows, evaluated.labels, task, pad_id=pad_id,
            batch_size=settings.batch_size, scoring=(train_rows.rows, train_rows.labels),
            uncertainty=Uncertainty(seed=seed), progress=False,
        )  # fmt: skip
        michel = MichelCurve(pruning, importance)
    total = int(np.prod(model_shape(model)))
    overlap = kept_overlap(kept, michel.importance)
    return GatesResult(
        curve=curve,
        curves=both_curves(curve, michel.pruning, task.main_metric, total),
        overlap=overlap,
        kept=numbered_from_one(kept_heads_table(kept)),
        metrics=gate_metrics(curve, overlap, task.main_metric, len(evaluated), len(train_rows)),
    )


def check_same_start(pruning: pd.DataFrame, full: dict[str, float], task: TaskConfig) -> None:
    """Fail in one line unless the pruning curve's unpruned point has the full model's main
    metric `full` on the gates' dev rows (else the two curves are not on the same rows)."""
    metric = task.main_metric
    start = float(pruning.loc[pruning["heads_pruned"] == 0, metric].iloc[0])
    if abs(start - full[metric]) > 1e-4:
        raise PipelineError(
            f"{task.name}: ablate's pruning.csv starts at {metric} {start:.4f}, the model scores "
            f"{full[metric]:.4f} on the gates' dev rows; the ablate tables are stale or use "
            "other rows: re-run the ablate stage"
        )


def both_curves(
    gates: pd.DataFrame, pruning: pd.DataFrame, metric: str, total: int
) -> pd.DataFrame:
    """One long table of both methods: method, heads_kept, metric, ci_low, ci_high (the
    interval columns are empty where the pruning table has none)."""
    gradient = pruning.assign(heads_kept=total - pruning["heads_pruned"])
    columns = ["heads_kept", metric, "ci_low", "ci_high"]
    parts = [
        frame.reindex(columns=columns).assign(method=method)
        for method, frame in (("gates", gates), ("gradient", gradient))
    ]
    table = pd.concat(parts, ignore_index=True)
    return table[["method", *columns]].rename(columns={metric: "metric"})


def gate_metrics(
    curve: pd.DataFrame, overlap: pd.DataFrame, metric: str, examples: int, train_examples: int
) -> dict[str, float | int | str]:
    """Flat metrics: per lambda (`lambda_0.01.heads_kept`, `.<metric>`, `.jaccard`)."""
    metrics: dict[str, float | int | str] = {
        "main_metric": metric,
        "num_examples": examples,
        "train_examples": train_examples,
    }
    for row, shared in zip(curve.itertuples(), overlap.itertuples(), strict=True):
        key = f"lambda_{row.l0_lambda:g}"
        metrics[f"{key}.heads_kept"] = int(row.heads_kept)
        metrics[f"{key}.{metric}"] = round(float(getattr(row, metric)), 6)
        metrics[f"{key}.jaccard"] = round(shared.jaccard, 6)
    return metrics
