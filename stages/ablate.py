"""ablate: head and layer disabling sweeps (Figs. 8-9), gradient head importance and the
iterative pruning curve (Michel et al. 2019) for one task's fine-tuned model.

Reads outputs/models/<task>/ and the first `ablate.num_examples` rows of the task's dev split.
Writes under outputs/plots/ablate/<task>/ the tables heads.csv, layers.csv, importance.csv
and pruning.csv; under outputs/figures/ablate/<task>/ the figures fig8_heads.png,
fig9_layers.png and pruning.png; and outputs/metrics/ablate/<task>.json.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np
import torch

from pipeline.attention.engine import attach, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.config import TaskSpec
from pipeline.core.errors import PipelineError
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.encoding import encode
from pipeline.data.glue import read_split
from pipeline.michel.ablation import head_ablations, layer_ablations, summary, sweep, sweep_table
from pipeline.michel.figures import head_delta_heatmap, layer_delta_bars, pruning_curve_plot
from pipeline.michel.importance import importance_table, prunable_fraction, pruning_curve
from pipeline.models.loading import load_finetuned, load_tokenizer, pick_device
from pipeline.models.training import check_labels

log = logging.getLogger(__name__)


def deterministic() -> None:
    """Same numbers on every run, on CPU and CUDA (cuBLAS needs a fixed workspace)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def importance_rows(stage: StageRun, task: TaskSpec, tokenizer) -> tuple[list, np.ndarray] | None:
    """The (rows, labels) that score head importance: the first `importance_examples` train
    rows, or None to score the evaluated dev rows themselves."""
    settings = stage.cfg.ablate
    if settings.importance_split == "eval":
        return None
    if settings.importance_split != "train":
        raise PipelineError(
            f"ablate.importance_split '{settings.importance_split}' is not train or eval"
        )
    frame = read_split(stage.data(), task.name, "train").head(settings.importance_examples)
    labels = frame["label"].to_numpy()
    check_labels(task, labels, f"{task.name} train")
    return encode(tokenizer, task, frame, stage.cfg.shared.max_length), labels


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.ablate
    task = TaskSpec.from_config(cfg.task)
    deterministic()
    folder = stage.upstream("models", task.name)
    model = load_finetuned(folder).to(pick_device(cfg.device))
    tokenizer = load_tokenizer(cfg.model)
    layerwise = Layerwise.of(attach(model))
    shape = model_shape(model)

    frame = read_split(stage.data(), task.name, task.eval_split)
    frame = frame if settings.num_examples is None else frame.head(settings.num_examples)
    labels = frame["label"].to_numpy()
    check_labels(task, labels, f"{task.name} {task.eval_split}")
    rows = encode(tokenizer, task, frame, cfg.shared.max_length)
    pad_id = tokenizer.pad_token_id
    log.info("%s: %d dev examples, model %d layers x %d heads", task.name, len(rows), *shape)

    started = time.perf_counter()
    result = sweep(
        layerwise,
        rows,
        head_ablations(shape) + layer_ablations(shape),
        mode=settings.mode,
        pad_id=pad_id,
        batch_size=settings.batch_size,
        ablations_per_pass=settings.ablations_per_pass,
        cache_budget_mb=settings.cache_budget_mb,
    )
    sweep_seconds = time.perf_counter() - started
    table = sweep_table(result, task, labels)
    heads, layers = table[table["head"] >= 0], table[table["head"] < 0].drop(columns="head")

    plots = stage.out("plots", "ablate", task.name)
    figures = stage.out("figures", "ablate", task.name)
    write_table(plots / "heads.csv", heads)
    write_table(plots / "layers.csv", layers)
    metric = task.main_metric
    config = {
        "task": task.name,
        "model": cfg.model.name,
        "mode": settings.mode,
        "examples": len(rows),
    }
    where = f"{task.name}, {len(rows)} dev examples, {settings.mode} mode"
    save_figure(
        figures / "fig8_heads.png",
        head_delta_heatmap(heads, metric, f"Disabling one head ({where})"),
        f"Change in {metric} (x100; baseline {heads['baseline'].iloc[0]:.3f}) when each single "
        f"head is disabled ({settings.mode} mode), on {len(rows)} {task.name} dev examples; "
        "positive cells: the model does better without that head (paper Fig. 8).",
        config,
    )
    save_figure(
        figures / "fig9_layers.png",
        layer_delta_bars(layers, metric, f"Disabling one layer ({where})"),
        f"Change in {metric} (x100) when all heads of one layer are disabled ({settings.mode} "
        f"mode), on {len(rows)} {task.name} dev examples (paper Fig. 9).",
        config,
    )
    metrics = {
        **summary(heads, layers, task),
        "mode": settings.mode,
        "num_examples": len(rows),
        "sweep_seconds": round(sweep_seconds, 1),
    }

    started = time.perf_counter()
    scoring = importance_rows(stage, task, tokenizer)
    scored = "the same examples" if scoring is None else f"{len(scoring[0])} train examples"
    curve, importance = pruning_curve(
        layerwise,
        rows,
        labels,
        task,
        pad_id=pad_id,
        step=settings.prune_step,
        batch_size=settings.batch_size,
        scoring=scoring,
    )
    write_table(plots / "importance.csv", importance_table(importance))
    write_table(plots / "pruning.csv", curve)
    save_figure(
        figures / "pruning.png",
        pruning_curve_plot(curve, metric, f"Iterative head pruning ({task.name})"),
        f"{metric} on {len(rows)} {task.name} dev examples as heads are pruned "
        f"({settings.prune_step:.0%} of all heads per step, least important first by "
        f"gradient importance on {scored}, recomputed after each step; Michel et al. 2019).",
        {**config, "prune_step": settings.prune_step},
    )
    metrics.update(
        {
            "prunable_fraction": prunable_fraction(curve, metric, settings.prune_keep),
            "pruned_half_metric": float(
                curve.loc[(curve["fraction_pruned"] - 0.5).abs().idxmin(), metric]
            ),
            "importance_examples": len(rows) if scoring is None else len(scoring[0]),
            "importance_seconds": round(time.perf_counter() - started, 1),
        }
    )
    write_json(stage.out("metrics", "ablate", f"{task.name}.json"), metrics)


if __name__ == "__main__":
    stage_main(run)
