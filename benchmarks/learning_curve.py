"""Does a fine-tuning recipe learn its task? Dev score and the claims' learned-task gate over
training rows, epochs, learning rate and fine-tuning seed.

    python -m benchmarks.learning_curve --task rte [--model minilm_l6] [--profile quick]
        [--rows 600 --rows 2490] [--epochs 2 --epochs 4] [--lr 1e-4 --lr 5e-5]
        [--seed 42 --seed 43] [--max-length 64] [--threads 2] [--jsonl PATH]

Every combination of the lists is one recipe. A recipe trains the profile's fine-tuning loop
(`pipeline.models.finetune.finetune_task`, the `finetuned` variant only) on a seeded subset of
`--rows` rows of the task's local training split (drawn as `prepare` draws it, with the
profile's data seed; `all` takes the whole split), from fine-tuning seed `--seed`, and scores it
on the task's whole dev split, both encoded at the profile's `shared.max_length` word pieces
(`--max-length` another length, e.g. to see what truncating RTE's premises costs). Each result
gives the dev score of the task's main metric with its 95% bootstrap interval, and the two
paired differences the claims' gate reads (`pipeline/claims/validity.py`): over the best
constant prediction and over the pre-trained model with its fresh head. A recipe passes the gate
when both lower bounds lie above 0, exactly as Table 1 and the claims judge it (1,000 resamples,
seed 0 of the stats helpers).

Results are appended one JSON line per recipe to `--jsonl` as they finish (a long study
keeps what it finished), and a markdown table of everything in the file is printed at the
end. The recipe a profile uses and the study that chose it are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import OmegaConf

from benchmarks.bench_cost import glue_folder, profile_params
from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.claims.validity import LEARNED_ABOVE
from pipeline.core.schema import load_model, load_task, typed
from pipeline.core.stats import bootstrap_interval, paired_difference_interval
from pipeline.data.glue import read_local_split, subsample
from pipeline.kovaleva.table1 import constant_prediction
from pipeline.models.batched_metrics import batched_metric
from pipeline.models.finetune import finetune_task
from pipeline.models.loading import load_tokenizer

RESAMPLES = 1000  # as Table 1 judges the gate (table1.bootstrap_resamples of every profile)


def recipe_settings(profile: dict[str, Any], epochs: int, learning_rate: float) -> FinetuneConfig:
    """The profile's fine-tuning settings with `epochs` and `learning_rate`, and no baseline
    trained (the pre-trained model is only scored)."""
    finetune = dict(profile["finetune"], epochs=epochs, learning_rate=learning_rate)
    finetune["baselines"] = {"pretrained_no_finetune": True, "random_init": False}
    return typed(FinetuneConfig, OmegaConf.create(finetune))


def gate(task_name: str, predictions) -> dict[str, Any]:
    """Dev score and the learned-task gate's two paired differences, each with its interval."""
    task = load_task(task_name)
    metric = batched_metric(task, task.main_metric)
    labels = predictions["label"].to_numpy()  # [N]
    tuned = predictions["finetuned"].to_numpy()  # [N]
    chance = np.full_like(labels, constant_prediction(task, labels))  # [N]
    options = {"n_resamples": RESAMPLES, "seed": 0, "vectorized": True}
    score = bootstrap_interval(metric, labels, tuned, **options)
    over_chance = paired_difference_interval(metric, labels, chance, tuned, **options)
    over_pretrained = paired_difference_interval(
        metric, labels, predictions["pretrained"].to_numpy(), tuned, **options
    )
    return {
        "metric": task.main_metric,
        "dev_rows": len(labels),
        "score": score.as_dict("score"),
        "over_chance": over_chance.as_dict("over_chance"),
        "over_pretrained": over_pretrained.as_dict("over_pretrained"),
        "learned": bool(over_chance.low > LEARNED_ABOVE and over_pretrained.low > LEARNED_ABOVE),
    }


def run_recipe(
    profile: dict[str, Any], model_name: str, task_name: str, rows: int | None, epochs: int,
    learning_rate: float, seed: int, max_length: int,
) -> dict[str, Any]:  # fmt: skip
    """Train and judge one recipe (module docstring)."""
    task, model = load_task(task_name), load_model(model_name)
    tokenizer = load_tokenizer(model)
    folder = glue_folder()  # composes the config: once per recipe
    train_split = read_local_split(folder, task, "train")[0]
    train_frame = subsample(train_split, rows, profile["seed"])
    eval_frame = read_local_split(folder, task, task.eval_split)[0]
    started = time.perf_counter()
    result = finetune_task(
        model, tokenizer, task, train_frame, eval_frame,
        recipe_settings(profile, epochs, learning_rate),
        seed=seed, max_length=max_length, device=torch.device("cpu"),
    )  # fmt: skip
    return {
        "model": model_name,
        "task": task_name,
        "train_rows": len(train_frame),
        "epochs": epochs,
        "learning_rate": learning_rate,
        "batch_size": profile["finetune"]["batch_size"],
        "seed": seed,
        "max_length": max_length,
        "train_seconds": round(time.perf_counter() - started, 1),
        **gate(task_name, result.predictions),
    }


def table(records: list[dict[str, Any]]) -> str:
    """Markdown: one line per recipe, in the file's order."""
    lines = [
        "| model | task | rows | epochs | lr | seed | length | dev score [95% CI] | "
        "over chance, lower | over pre-trained, lower | learned | s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        s = r["score"]
        lines.append(
            f"| {r['model']} | {r['task']} | {r['train_rows']} | {r['epochs']} | "
            f"{r['learning_rate']:g} | {r['seed']} | {r.get('max_length', 64)} | {s['score']:.3f} "
            f"[{s['score_ci_low']:.3f}, {s['score_ci_high']:.3f}] | "
            f"{r['over_chance']['over_chance_ci_low']:+.3f} | "
            f"{r['over_pretrained']['over_pretrained_ci_low']:+.3f} | "
            f"{'yes' if r['learned'] else 'no'} | {r['train_seconds']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--rows", action="append", help="training rows, or 'all'")
    parser.add_argument("--epochs", action="append", type=int)
    parser.add_argument("--lr", action="append", type=float)
    parser.add_argument("--seed", action="append", type=int)
    parser.add_argument("--max-length", type=int, help="default: the profile's")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--jsonl", type=Path, default=Path("learning_curve.jsonl"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    profile = profile_params(args.profile)
    grid = itertools.product(
        [None if r == "all" else int(r) for r in args.rows or ["all"]],
        args.epochs or [profile["finetune"]["epochs"]],
        args.lr or [profile["finetune"]["learning_rate"]],
        args.seed or [profile["seed"]],
    )
    max_length = args.max_length or profile["shared"]["max_length"]
    for rows, epochs, learning_rate, seed in grid:
        record = run_recipe(
            profile, args.model, args.task, rows, epochs, learning_rate, seed, max_length
        )
        with args.jsonl.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        print(table([record]).splitlines()[-1], flush=True)
    records = [json.loads(line) for line in args.jsonl.read_text().splitlines() if line]
    print(table(records))


if __name__ == "__main__":
    main()
