"""The ablate stage's work for one task: Kovaleva et al. Figs. 8-9 and Michel et al.'s pruning.

`ablate_task` disables each head and each layer of a fine-tuned classifier on a seeded
sample of its task's dev rows, stratified by label (pipeline/data/sampling.py), gives every
effect a paired bootstrap interval and a permutation test with Benjamini-Hochberg q-values
(ablation.py), then prunes heads in order of gradient importance (importance.py), and
returns the five tables the stage writes (the sampled rows' ids among them) and its
metrics. The tables and metrics number layers and heads from 1 (`L3-H5`), as the papers
do; the functions they come from count from 0.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pandas as pd
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.ablation.importance import (
    importance_table,
    metric_near_fraction,
    prunable_fraction,
    pruning_curve,
)
from pipeline.ablation.sweep import (
    Uncertainty,
    baseline_interval,
    head_ablations,
    layer_ablations,
    summary,
    sweep,
    sweep_table,
)
from pipeline.analyses.ablate.settings import AblateConfig
from pipeline.attention.engine import attach, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.head_names import numbered_from_one
from pipeline.core.precision import set_determinism
from pipeline.core.schema import CompileConfig, TaskConfig
from pipeline.core.stats import Interval
from pipeline.data.sampling import evaluation_sample
from pipeline.models.labelled import LabelledRows, labelled_rows

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ablated:
    """What `ablate_task` gives the stage to write; layers and heads numbered from 1."""

    heads: pd.DataFrame  # per head: layer, head, task metrics, baseline, delta, loss, delta_loss
    layers: pd.DataFrame  # per layer: layer, task metrics, baseline, delta, loss, delta_loss
    importance: pd.DataFrame  # per head: layer, head, importance (normalised per layer)
    pruning: pd.DataFrame  # per point: heads_pruned, fraction_pruned, metrics, CI, delta
    examples: pd.DataFrame  # the evaluated dev rows: idx (row of the split), label
    metrics: dict[str, float | int | str]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem."""
        return {
            "heads": self.heads,
            "layers": self.layers,
            "importance": self.importance,
            "pruning": self.pruning,
            "examples": self.examples,
        }


def ablate_task(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    task: TaskConfig,
    dev: pd.DataFrame,
    train: pd.DataFrame | None,
    settings: AblateConfig,
    *,
    max_length: int,
    seed: int,
    deterministic: bool = True,
    compile_settings: CompileConfig | None = None,
) -> Ablated:
    """Sweeps, importance and pruning curve of `model` (fine-tuned on `task`, on its device)
    on `settings.rows(task)` rows of `dev` drawn with `seed` (stratified by label).
    Importance is scored on `settings.importance_examples` rows of `train` drawn the same
    way (importance_split train), or on the evaluated rows (importance_split eval: `train`
    is not read and may be None). `deterministic` (the `deterministic` setting) switches
    torch to deterministic algorithms, or off them, for the rest of the process;
    `compile_settings` (the `compile` setting, default eager) compiles the sweeps' and the
    importance passes' layers."""
    set_determinism(deterministic, model.device)
    layerwise = Layerwise.of(attach(model))
    uncertainty = Uncertainty(settings.bootstrap_resamples, settings.permutation_resamples, seed)
    dev = evaluation_sample(dev, task, settings.rows(task.name), seed)
    evaluated = labelled_rows(tokenizer, task, dev, max_length, f"{task.name} {task.eval_split}")
    log.info(
        "%s: %d dev examples, model %d layers x %d heads",
        task.name,
        len(evaluated),
        *model_shape(model),
    )
    heads, layers, baseline = _sweep_tables(
        layerwise, evaluated, task, settings, tokenizer.pad_token_id, uncertainty, compile_settings
    )

    started = time.perf_counter()
    scoring = None  # importance on the evaluated rows themselves
    if settings.importance_split == "train":
        scored = evaluation_sample(train, task, settings.importance_examples, seed)
        scoring = labelled_rows(tokenizer, task, scored, max_length, f"{task.name} train")
    curve, importance = pruning_curve(
        layerwise,
        evaluated.rows,
        evaluated.labels,
        task,
        pad_id=tokenizer.pad_token_id,
        step=settings.prune_step,
        batch_size=settings.batch_size,
        scoring=None if scoring is None else (scoring.rows, scoring.labels),
        uncertainty=uncertainty,
        compile_settings=compile_settings,
    )
    log.info("%s: pruning curve in %.1f s", task.name, time.perf_counter() - started)

    metric = task.main_metric
    metrics = {
        **summary(heads, layers, task, uncertainty.alpha),
        **{key: value for key, value in baseline.as_dict("baseline").items() if "ci" in key},
        "mode": settings.mode,
        "num_examples": len(evaluated),
        "importance_examples": len(evaluated if scoring is None else scoring),
        "prunable_fraction": prunable_fraction(curve, metric, settings.prune_keep),
        "pruned_half_metric": metric_near_fraction(curve, metric, 0.5),
    }
    return Ablated(
        heads=numbered_from_one(heads),
        layers=numbered_from_one(layers),
        importance=numbered_from_one(importance_table(importance)),
        pruning=curve,
        examples=dev[["idx", "label"]],
        metrics=metrics,
    )


def _sweep_tables(
    layerwise: Layerwise,
    evaluated: LabelledRows,
    task: TaskConfig,
    settings: AblateConfig,
    pad_id: int,
    uncertainty: Uncertainty,
    compile_settings: CompileConfig | None,
) -> tuple[pd.DataFrame, pd.DataFrame, Interval]:
    """(heads, layers, baseline): every single head and every whole layer disabled
    (0-based), and the unablated model's main metric with its interval."""
    shape = model_shape(layerwise.model)
    started = time.perf_counter()
    result = sweep(
        layerwise,
        evaluated.rows,
        head_ablations(shape) + layer_ablations(shape),
        mode=settings.mode,
        pad_id=pad_id,
        batch_size=settings.batch_size,
        ablations_per_pass=settings.ablations_per_pass,
        cache_budget_mb=settings.cache_budget_mb,
        compile_settings=compile_settings,
    )
    log.info("%s: ablation sweep in %.1f s", task.name, time.perf_counter() - started)
    started = time.perf_counter()
    table = sweep_table(result, task, evaluated.labels, uncertainty)
    log.info("%s: intervals and tests in %.1f s", task.name, time.perf_counter() - started)
    heads, layers = table[table["head"] >= 0], table[table["head"] < 0].drop(columns="head")
    return heads, layers, baseline_interval(result, task, evaluated.labels, uncertainty)
