"""Benchmark of the attention measures and of the hard-concrete gate sweep.

    python -m benchmarks.bench_measures [--task mrpc] [--examples 64] [--threads 1] [--repeat 3]

Prints, for the quick profile's fine-tuned model (outputs/models/<task>/seed<seed>, the
primary seed's) on a seeded sample of its dev rows (data/glue/<task>):
1. the time to capture every layer's weights, and weights + value-weighted norms, through the
   engine, and their ratio measured in this run (goal: norms cost <= 1.5x weights alone);
2. the time to roll out the captured weights (numpy, per example);
3. the gate sweep's time per lambda: one fit with conf/gates/default.yaml's settings plus the
   evaluation of the deterministic gates on the dev sample.
Times are the best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from omegaconf import OmegaConf

from pipeline.ablation.importance import gated_logits
from pipeline.analyses.gates.settings import GatesConfig
from pipeline.attention.capture import capture_measures
from pipeline.attention.engine import attach
from pipeline.attention.layerwise import Layerwise
from pipeline.attention.rollout import rollout
from pipeline.core.config import CONF_DIR
from pipeline.core.run_config import primary_model
from pipeline.core.schema import load_model, load_task, typed
from pipeline.data.batching import length_batches
from pipeline.data.glue import read_split
from pipeline.data.sampling import evaluation_sample
from pipeline.models.labelled import labelled_rows
from pipeline.models.loading import load_finetuned, load_tokenizer
from pipeline.voita.hard_concrete import fit_gates

REPO = Path(__file__).resolve().parent.parent
MAX_LENGTH = 64  # the quick profile's shared.max_length
BATCH_SIZE = 16
SEED = 42


def best_of(repeat: int, work) -> float:
    """The shortest wall time of `repeat` calls of `work`."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def capture_all(model, rows, pad_id: int, measures: tuple[str, ...]) -> list[dict]:
    lengths = [len(row["input_ids"]) for row in rows]
    return [
        capture_measures(model, [rows[i] for i in chosen], pad_id, measures)
        for chosen in length_batches(lengths, BATCH_SIZE)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="mrpc")
    parser.add_argument("--examples", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    task = load_task(args.task)
    tokenizer = load_tokenizer(load_model("minilm_l6"))
    model = attach(load_finetuned(primary_model(REPO, task.name)).eval())
    dev = evaluation_sample(read_split(REPO / "data", task.name, task.eval_split), task,
                            args.examples, SEED)  # fmt: skip
    rows = labelled_rows(tokenizer, task, dev, MAX_LENGTH, f"{task.name} dev")
    pad = tokenizer.pad_token_id
    print(f"{task.name}: {len(rows)} dev examples, {args.threads} thread(s), best of {args.repeat}")

    weights = best_of(args.repeat, lambda: capture_all(model, rows.rows, pad, ("weights",)))
    both = best_of(args.repeat, lambda: capture_all(model, rows.rows, pad, ("weights", "norms")))
    print(f"capture weights:          {weights:.3f} s")
    print(f"capture weights + norms:  {both:.3f} s")
    print(f"norms cost ratio:         {both / weights:.2f}x (goal <= 1.5x)")

    captured = [
        maps.numpy()
        for batch in capture_all(model, rows.rows, pad, ("weights",))
        for maps in batch["weights"]
    ]
    rolled = best_of(args.repeat, lambda: [rollout(maps) for maps in captured])
    print(f"rollout:                  {rolled:.3f} s ({1e3 * rolled / len(captured):.2f} ms/ex)")

    settings = typed(GatesConfig, OmegaConf.load(CONF_DIR / "gates" / "default.yaml"))
    train = evaluation_sample(read_split(REPO / "data", task.name, "train"), task,
                              settings.train_examples, SEED)  # fmt: skip
    fitted = labelled_rows(tokenizer, task, train, MAX_LENGTH, f"{task.name} train")
    layerwise = Layerwise.of(model)

    def one_lambda() -> None:
        gates = fit_gates(
            layerwise, fitted.rows, fitted.labels, task, l0_lambda=settings.lambdas[0],
            settings=settings, pad_id=pad, seed=SEED,
        )  # fmt: skip
        gated_logits(layerwise, rows.rows, ~gates.kept().cpu(), pad_id=pad,
                     batch_size=settings.batch_size)  # fmt: skip

    per_lambda = best_of(args.repeat, one_lambda)
    print(
        f"gate sweep:               {per_lambda:.3f} s per lambda ({settings.steps} steps of "
        f"{settings.batch_size}, eval on {len(rows)}); {len(settings.lambdas)} lambdas = "
        f"{per_lambda * len(settings.lambdas):.1f} s per task"
    )


if __name__ == "__main__":
    main()
