"""How far bf16 autocast moves the project's numbers from float32, on this machine's CPU.

    python -m benchmarks.bench_precision [--task sst2] [--examples 128] [--train-rows 64]
                                         [--precision bf16] [--threads 2]

1. Inference: the fine-tuned MiniLM of outputs/models/<task>/seed<seed> (the pre-trained
   encoder with a seeded fresh head when absent) on the first N rows of the prepared dev split
   (data/glue):
   the largest and mean |difference| of every attention probability (engine capture), of the
   logits, the share of predictions that agree, and the task's main metric under each dtype.
2. Training: MiniLM fine-tuned on the first `--train-rows` training rows (2 epochs, the
   quick profile's loop settings) in float32 and in the low dtype from the same seed: the
   largest |difference| of the loss curves and the dev metric of each (0 rows: skipped).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.attention.capture import capture_maps
from pipeline.attention.engine import attach
from pipeline.core.config import CONF_DIR
from pipeline.core.precision import autocast
from pipeline.core.run_config import primary_model
from pipeline.core.schema import load_model, load_task, typed
from pipeline.data.glue import read_split
from pipeline.models.labelled import labelled_rows
from pipeline.models.loading import load_classifier, load_finetuned, load_tokenizer
from pipeline.models.metrics import task_metrics
from pipeline.models.training import predict, train

REPO = Path(__file__).resolve().parent.parent
CPU = torch.device("cpu")


def attention_maps(model, rows, pad_id: int, setting: str) -> np.ndarray:
    """Every captured probability of every row, flattened (float32)."""
    captured = []
    with torch.no_grad(), autocast(setting, CPU):
        for start in range(0, len(rows), 16):
            maps = capture_maps(model, rows[start : start + 16], pad_id)  # [L, H, n, n] each
            captured += [m.flatten().numpy() for m in maps]
    return np.concatenate(captured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="sst2")
    parser.add_argument("--examples", type=int, default=128)
    parser.add_argument("--train-rows", type=int, default=64)
    parser.add_argument("--precision", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    low = args.precision

    task = load_task(args.task)
    model_cfg = load_model("minilm_l6")
    tokenizer = load_tokenizer(model_cfg)
    pad_id = tokenizer.pad_token_id
    dev = read_split(REPO / "data", task.name, task.eval_split).head(args.examples)
    scoring = labelled_rows(tokenizer, task, dev, 64, "dev")
    folder = primary_model(REPO, task.name)
    if (folder / "config.json").exists():
        model, source = load_finetuned(folder), f"fine-tuned {folder}"
    else:
        model, source = load_classifier(model_cfg, tokenizer, task.num_labels), "fresh head"
    model = attach(model.eval())
    print(f"minilm_l6 ({source}); {task.name} dev: {len(scoring)} rows; {low} vs fp32 on CPU")

    maps = {name: attention_maps(model, scoring.rows, pad_id, name) for name in ("fp32", low)}
    gap = np.abs(maps[low] - maps["fp32"])
    logits = {name: predict(model, scoring.rows, 64, pad_id, CPU, name) for name in ("fp32", low)}
    logit_gap = np.abs(logits[low] - logits["fp32"])
    metric = task.main_metric
    scores = {name: task_metrics(task, scoring.labels, v)[metric] for name, v in logits.items()}
    print(f"attention probabilities: max |diff| {gap.max():.2e}, mean {gap.mean():.2e}")
    print(f"logits: max |diff| {logit_gap.max():.2e}, mean {logit_gap.mean():.2e}")
    if not task.is_regression:
        agree = (logits[low].argmax(-1) == logits["fp32"].argmax(-1)).mean()
        print(f"predictions agreeing: {agree:.4f}")
    print(f"{metric}: fp32 {scores['fp32']:.4f}, {low} {scores[low]:.4f}")
    if args.train_rows == 0:
        return

    train_frame = read_split(REPO / "data", task.name, "train").head(args.train_rows)
    training = labelled_rows(tokenizer, task, train_frame, 64, "train")
    loop = OmegaConf.load(CONF_DIR / "finetune" / "default.yaml")
    settings = typed(FinetuneConfig, loop)
    curves, trained = {}, {}
    for name in ("fp32", low):
        fresh = load_classifier(model_cfg, tokenizer, task.num_labels, seed=42)
        curves[name] = np.array(
            train(fresh, task, training.rows, training.labels, settings, 42, pad_id, CPU, "", name)
        )[:, 1]
        scored = predict(fresh, scoring.rows, 64, pad_id, CPU, name)
        trained[name] = task_metrics(task, scoring.labels, scored)[metric]
    loss_gap = np.abs(curves[low] - curves["fp32"]).max()
    print(
        f"fine-tuning {len(training)} rows x {settings.epochs} epochs: loss curve max |diff| "
        f"{loss_gap:.2e}; dev {metric}: fp32 {trained['fp32']:.4f}, {low} {trained[low]:.4f}"
    )


if __name__ == "__main__":
    main()
