"""Stability across fine-tuning seeds: does a result hold for another seed of the same run?

finetune and ablate run once per (task, seed) of `tasks` x `seeds`; every seed is scored on
the same dev rows (samples are drawn with the primary `seed`). For each task this module
compares the seeds:

- the task's main metric of the fine-tuned model: its mean over seeds and its standard
  deviation (ddof = 1, so defined from two seeds on);
- Spearman's rank correlation (scipy.stats.spearmanr) between two seeds of the per-head
  ablation effects (`delta` of heads.csv: metric with the head disabled - baseline) and of
  the gradient importances (importance.csv), over the heads both tables hold, for every pair
  of seeds; the metrics give the mean over pairs. A pair where one side is constant (e.g.
  every delta 0 on a small sample) has no rank correlation: it is left out of the mean,
  and the key is left out when no pair has one;
- the heads whose ablation effect is significant (Benjamini-Hochberg q < alpha, the ablate
  stage's alpha) in every seed.

Layers and heads are numbered from 1, as the ablate tables write them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from pipeline.core import layout
from pipeline.core.errors import PipelineError
from pipeline.core.schema import TaskConfig

# The false discovery rate under which the ablate stage calls a head significant
# (pipeline/ablation/sweep.py, Uncertainty.alpha; tests/extensions/test_seeds.py keeps them equal).
ALPHA = 0.05
KEYS = ["layer", "head"]


@dataclass(frozen=True)
class SeedRuns:
    """What the seeds of one task produced, read from the finetune and ablate outputs."""

    task: TaskConfig
    metrics: dict[int, dict[str, float]]  # seed -> finetune metrics (`finetuned.<metric>`)
    heads: dict[int, pd.DataFrame]  # seed -> heads.csv: layer, head, delta, q_value, ...
    importance: dict[int, pd.DataFrame]  # seed -> importance.csv: layer, head, importance


def _existing(path: Path) -> Path:
    if not path.exists():
        raise PipelineError(f"{path} is missing; run `dvc repro finetune ablate` first")
    return path


def read_seed_runs(outputs: Path, task: TaskConfig, seeds: list[int]) -> SeedRuns:
    """Every seed's finetune metrics and ablate tables of `task` under `outputs`."""
    metrics, heads, importance = {}, {}, {}
    for seed in seeds:
        where = layout.metrics(outputs, "finetune", task.name, layout.seed_folder(seed))
        metrics[seed] = json.loads(_existing(where).read_text())
        tables = layout.results(outputs, "plots", "ablate", task.name, layout.seed_folder(seed))
        heads[seed] = pd.read_csv(_existing(tables / "heads.csv"))
        importance[seed] = pd.read_csv(_existing(tables / "importance.csv"))
    return SeedRuns(task, metrics, heads, importance)


def metric_table(runs: SeedRuns) -> pd.DataFrame:
    """One row per seed: seed, metric (the task's main metric), finetuned (its value)."""
    metric = runs.task.main_metric
    return pd.DataFrame(
        {
            "seed": seed,
            "metric": metric,
            "finetuned": m[f"finetuned.{metric}"],
        }
        for seed, m in runs.metrics.items()
    )


def pairwise_spearman(tables: dict[int, pd.DataFrame], column: str) -> pd.DataFrame:
    """One row per pair of seeds: seed_a, seed_b, heads (matched on layer, head), spearman,
    p_value (NaN where one side is constant)."""
    rows = []
    for a, b in itertools.combinations(sorted(tables), 2):
        paired = tables[a][[*KEYS, column]].merge(tables[b][[*KEYS, column]], on=KEYS)
        x, y = paired[f"{column}_x"].to_numpy(), paired[f"{column}_y"].to_numpy()
        constant = np.ptp(x) == 0 or np.ptp(y) == 0
        rho, p = (np.nan, np.nan) if constant else spearmanr(x, y)
        rows.append({"seed_a": a, "seed_b": b, "heads": len(paired), "spearman": rho, "p_value": p})
    return pd.DataFrame(rows, columns=["seed_a", "seed_b", "heads", "spearman", "p_value"])


def significant_every_seed(heads: dict[int, pd.DataFrame], alpha: float = ALPHA) -> pd.DataFrame:
    """The heads with q_value < alpha in every seed: layer, head, then `delta_seed<N>` per
    seed (the effect's sign can differ between seeds; the columns show it)."""
    wide = None
    for seed, table in sorted(heads.items()):
        chosen = table.loc[table["q_value"] < alpha, [*KEYS, "delta"]]
        chosen = chosen.rename(columns={"delta": f"delta_{layout.seed_folder(seed)}"})
        wide = chosen if wide is None else wide.merge(chosen, on=KEYS)
    return wide.sort_values(KEYS).reset_index(drop=True)


@dataclass(frozen=True)
class Compared:
    """One task's cross-seed comparison: its tables (name -> table, each with a `task`
    column) and its metrics."""

    task: str
    tables: dict[str, pd.DataFrame]  # metric, ablation_spearman, importance_spearman, significant
    metrics: dict[str, float | int]  # `<task>.<key>` (module docstring)


def compare_seeds(runs: SeedRuns) -> Compared:
    """The cross-seed statistics of one task (module docstring)."""
    task = runs.task.name
    metric = metric_table(runs)
    pairs = {
        "ablation_spearman": pairwise_spearman(runs.heads, "delta"),
        "importance_spearman": pairwise_spearman(runs.importance, "importance"),
    }
    significant = significant_every_seed(runs.heads)
    values = metric["finetuned"]  # [seeds]
    metrics: dict[str, float | int] = {
        f"{task}.seeds": len(values),
        f"{task}.metric_mean": float(values.mean()),
        f"{task}.heads_significant_every_seed": len(significant),
    }
    if len(values) > 1:
        metrics[f"{task}.metric_sd"] = float(values.std(ddof=1))
    for key, table in pairs.items():
        if table["spearman"].notna().any():
            metrics[f"{task}.{key}"] = float(table["spearman"].mean())  # NaN pairs skipped
    tables = {"metric": metric, **pairs, "significant": significant}
    for table in tables.values():
        table.insert(0, "task", task)
    return Compared(task, tables, metrics)


def combined(compared: Sequence[Compared]) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
    """Every task's tables, concatenated by name, and every task's metrics."""
    tables = {name: pd.concat([c.tables[name] for c in compared]) for name in compared[0].tables}
    return tables, {key: value for c in compared for key, value in c.metrics.items()}


def _task_summary(result: Compared) -> str:
    m, task = result.metrics, result.task
    seeds = m[f"{task}.seeds"]
    metric = result.tables["metric"]["metric"].iloc[0]
    line = f"{task}: {seeds} seed(s), {metric} {m[f'{task}.metric_mean']:.4f}"
    if seeds == 1:
        line += " (one seed: no spread, no correlation between seeds; add seeds to `seeds`)"
    else:
        line += f" +- {m[f'{task}.metric_sd']:.4f} (sd over seeds)"
        for key, what in (
            ("ablation_spearman", "ablation effects"),
            ("importance_spearman", "importances"),
        ):
            value = m.get(f"{task}.{key}")
            line += (
                f"; Spearman of {what} between seeds {value:.3f} (mean over pairs)"
                if value is not None
                else f"; Spearman of {what} undefined (constant in a seed)"
            )
    significant = m[f"{task}.heads_significant_every_seed"]
    return line + f"; {significant} head(s) significant (q < {ALPHA}) in every seed."


def summary_text(compared: list[Compared]) -> str:
    """The lines that open the report's section, one per task: seeds, mean +- sd of the
    metric, the mean Spearman correlations, the heads significant in every seed, and what is
    left out and why."""
    return "\n".join(map(_task_summary, compared)) + "\n"
