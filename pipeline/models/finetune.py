"""The finetune stage's work for one task: the fine-tuned classifier and the Table 1 baselines.

Variants (Kovaleva et al. Table 1): `finetuned` (the pre-trained encoder with a fresh
classifier head, fine-tuned), `pretrained` (the same model with its fresh head, not trained)
and `random_init` (every weight random, fine-tuned the same way). Each is scored on the
task's eval split; the metrics are flat `<variant>.<metric>` keys, and each variant's
prediction for every scored row is kept (`predictions`), for paired intervals downstream.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.schema import CompileConfig, ModelConfig, TaskConfig
from pipeline.models.checkpoints import Checkpoints, fingerprint
from pipeline.models.labelled import LabelledRows, labelled_rows
from pipeline.models.loading import load_classifier
from pipeline.models.training import evaluate, train

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Finetuned:
    """What `finetune_task` gives the stage to write."""

    model: PreTrainedModel  # the fine-tuned classifier
    metrics: dict[str, float]  # train_rows, eval_rows, <variant>.<metric>, <variant>.final_loss
    curves: pd.DataFrame  # variant, step, loss: the mean loss of each logging window
    predictions: pd.DataFrame  # idx, label, then one column per variant (pretrained,
    # random_init, finetuned): its class id, or score for regression, for each eval row


def _checkpoints(
    folder: Path,
    settings: FinetuneConfig,
    seed: int,
    model_settings: ModelConfig,
    task: TaskConfig,
    variant: str,
    precision: str,
    compile_settings: CompileConfig | None,
    training: LabelledRows,
) -> Checkpoints:
    """Checkpoints of one variant's training, fingerprinted by everything its result depends
    on: loop settings, model, task, variant, precision, compile settings (their padding
    changes the batches) and the encoded training rows."""
    run = {
        "train": {**asdict(settings), "seed": seed},
        "model": asdict(model_settings),
        "task": task.name,
        "variant": variant,
        "precision": precision,
        "compile": None if compile_settings is None else asdict(compile_settings),
    }
    return Checkpoints(
        folder, settings.checkpoint_every, fingerprint(run, training.rows, training.labels)
    )


def finetune_task(
    model_settings: ModelConfig,
    tokenizer: PreTrainedTokenizerBase,
    task: TaskConfig,
    train_frame: pd.DataFrame,
    eval_frame: pd.DataFrame,
    settings: FinetuneConfig,
    *,
    seed: int,
    max_length: int,
    device: torch.device,
    precision: str = "fp32",
    deterministic: bool = True,
    compile_settings: CompileConfig | None = None,
    checkpoints: Path | None = None,
) -> Finetuned:
    """Train and score every variant of `settings` on the prepared train and eval splits,
    with fine-tuning seed `seed`.

    `precision` (a `precision` setting; default float32) is the compute dtype of training
    and scoring, `deterministic` and `compile_settings` the `deterministic` and `compile`
    settings (default: deterministic kernels, eager). Under `checkpoints`, each trained
    variant keeps its last state in `<checkpoints>/<variant>/` and resumes from it
    (pipeline/models/checkpoints.py); the caller removes the folder once its outputs are
    written.
    """
    training = labelled_rows(tokenizer, task, train_frame, max_length, f"{task.name} train")
    scoring = labelled_rows(
        tokenizer, task, eval_frame, max_length, f"{task.name} {task.eval_split}"
    )
    pad_id = tokenizer.pad_token_id
    metrics: dict[str, float] = {"train_rows": len(training), "eval_rows": len(scoring)}
    curves: list[dict] = []
    predicted: dict[str, np.ndarray] = {}  # variant -> [N] class ids or scores
    finetuned = None
    for variant in settings.variants:
        model = load_classifier(
            model_settings,
            tokenizer,
            task.num_labels,
            random_init=variant == "random_init",
            seed=seed,
        ).to(device)
        if variant != "pretrained":
            started = time.perf_counter()
            curve = train(
                model, task, training.rows, training.labels, settings, seed, pad_id, device,
                description=f"{task.name} {variant}",
                precision=precision,
                deterministic=deterministic,
                compile_settings=compile_settings,
                checkpoints=None if checkpoints is None else _checkpoints(
                    checkpoints / variant, settings, seed, model_settings, task, variant, precision,
                    compile_settings, training,
                ),
            )  # fmt: skip
            log.info("%s %s: trained in %.1f s", task.name, variant, time.perf_counter() - started)
            metrics[f"{variant}.final_loss"] = curve[-1][1]
            curves += [{"variant": variant, "step": s, "loss": loss} for s, loss in curve]
        scores, predicted[variant] = evaluate(
            model, task, scoring.rows, scoring.labels, settings.eval_batch_size, pad_id, device,
            precision, compile_settings,
        )  # fmt: skip
        metrics.update({f"{variant}.{name}": value for name, value in scores.items()})
        if variant == "finetuned":
            finetuned = model
    order = [v for v in ("pretrained", "random_init", "finetuned") if v in predicted]
    predictions = pd.DataFrame(
        {"idx": eval_frame["idx"].to_numpy(), "label": scoring.labels}
        | {variant: predicted[variant] for variant in order}
    )
    return Finetuned(finetuned, metrics, pd.DataFrame(curves), predictions)
