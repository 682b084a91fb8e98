"""A fine-tuning step, measured: real models against each other at one batch, and the training
loop's options against its default, all in one process beside one matmul rate.

    python -m benchmarks.bench_step [--model minilm_l6 --model mpnet_base] [--batch 32]
        [--length 128] [--repeats 3] [--task rte] [--steps 8] [--threads 2] [--no-compile]
        [--json PATH]

Models (`--model`, names of conf/model/*.yaml, loaded by the project's loader with their real
weights): one no-grad forward (`pipeline.models.training.predict`) and one training step
(`train` on one batch: forward, backward, clipping, AdamW) of `--batch` RTE dev pairs of
`--length` word pieces (bench_cost's inputs), the median of `--repeats` rounds after a
warm-up, the models alternating. Each is given in seconds, GFLOP/s (bench_cost's FLOP count;
a step is 3x the forward) and as a fraction of the float32 matmul rate (bench_cost's
`matmul_gflops`), measured before and after in the same process (the higher of the two).

Variants, on the first model, on the quick profile's real training batches (the first
`--steps` batches of `--task`'s prepared rows: prepare's subset, the profile's
`shared.max_length` and `finetune.batch_size`, in `length_grouped_batches`), each round running
the default and the variant on the same batch, the order alternating between rounds:

- threads: `torch.set_num_threads(1)` against `--threads` (under the OpenMP wait policy of
  the environment, which the output states: `pipeline.scale` runs parallel jobs with
  OMP_WAIT_POLICY=PASSIVE);
- two models: two copies of the model trained on the same batches one after the other on
  `--threads` threads (as a finetune stage trains its fine-tuned and random-init models)
  against the two side by side in two processes of one thread each, both timed from one
  wall-clock start;
- compile: `torch.compile` (inductor) of the model against eager; the first call and every
  call that compiles a new graph (the lengths vary from batch to batch) are counted as
  compile time, above the compiled steady state; the break-even is the steps after which the
  compile time is paid back, set against the quick profile's steps per fine-tuning process;
- optimizer: `optimizer.step()` alone on the model's real gradients, AdamW as training.py
  builds it on CPU (the per-tensor loop) against `foreach=True` and `fused=True`, and its
  share of the default step;
- length batching: the padded tokens of one epoch of the task in `length_grouped_batches`
  against a plain shuffle (padding as a share of the real tokens), and the mean step time of
  the first `--steps` batches of each order.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import OmegaConf
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from benchmarks.bench_cost import (
    GLUE_SIZES,
    TASK,
    Shape,
    _rows,
    glue_folder,
    matmul_gflops,
    profile_params,
)
from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.analyses.prepare.settings import PrepareConfig
from pipeline.core.schema import TaskConfig, load_model, load_task, typed
from pipeline.core.workers import shared_data, worker_pool
from pipeline.data.batching import length_grouped_batches
from pipeline.data.encoding import collate
from pipeline.data.glue import prepare_task
from pipeline.models.labelled import LabelledRows, labelled_rows
from pipeline.models.loading import load_classifier, load_tokenizer
from pipeline.models.training import _optimizer, predict, train

CPU = torch.device("cpu")
Rows = list[dict[str, list[int]]]


@dataclass(frozen=True)
class Subject:
    """A classifier and one batch of its rows, every row of the same length."""

    name: str
    model: PreTrainedModel
    rows: Rows
    labels: np.ndarray  # [B] class ids
    pad_id: int
    shape: Shape

    @property
    def forward_flops(self) -> float:
        return len(self.rows) * self.shape.forward_flops(len(self.rows[0]["input_ids"]))


def rate(seconds: float, flops: float, peak_gflops: float) -> dict[str, float]:
    """Seconds, the GFLOP/s they stand for and that rate as a fraction of the matmul peak."""
    gflops = flops / seconds / 1e9
    return {"seconds": seconds, "gflops": gflops, "of_peak": gflops / peak_gflops}


def interleaved(candidates: dict[str, Callable[[int], Any]], rounds: int) -> dict[str, list[float]]:
    """Seconds of every call: each candidate once on round 0 (warm-up, not kept), then
    `rounds` rounds (1, 2, ...) each calling every candidate with the round's number, in
    reversed order every other round so that the machine's load hits all alike."""
    names = list(candidates)
    for name in names:
        candidates[name](0)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(1, rounds + 1):
        for name in names if round_ % 2 else names[::-1]:
            started = time.perf_counter()
            candidates[name](round_)
            seconds[name].append(time.perf_counter() - started)
    return seconds


def step_settings(profile: dict[str, Any], batch_size: int) -> FinetuneConfig:
    """The profile's fine-tuning settings, one epoch of `batch_size`, no checkpoints."""
    settings = typed(FinetuneConfig, OmegaConf.create(profile["finetune"]))
    return replace(settings, epochs=1, batch_size=batch_size, checkpoint_every=0)


def one_step(
    model: torch.nn.Module,
    task: TaskConfig,
    rows: Rows,
    labels: np.ndarray,
    settings: FinetuneConfig,
    pad_id: int,
) -> None:
    """One training step of the project's loop (`train` on exactly one batch)."""
    batch = replace(settings, batch_size=len(rows))
    train(model, task, rows, labels, batch, 0, pad_id, CPU, description="bench step")


def time_models(
    subjects: list[Subject], settings: FinetuneConfig, rounds: int
) -> dict[tuple[str, str], float]:
    """Median seconds of every subject's forward and training step, the subjects alternating."""
    task = load_task(TASK)
    candidates: dict[tuple[str, str], Callable[[int], Any]] = {}
    for s in subjects:
        candidates[s.name, "forward"] = lambda _, s=s: predict(
            s.model, s.rows, len(s.rows), s.pad_id, CPU
        )
        candidates[s.name, "step"] = lambda _, s=s: one_step(
            s.model, task, s.rows, s.labels, settings, s.pad_id
        )
    return {key: statistics.median(v) for key, v in interleaved(candidates, rounds).items()}


def model_table(
    subjects: list[Subject], seconds: dict[tuple[str, str], float], peak_gflops: float
) -> list[dict[str, Any]]:
    """Each subject's forward and step: seconds, rate, fraction of the peak, and the ratio of
    its seconds to the first subject's."""
    table = []
    for s in subjects:
        for what, flops in (("forward", s.forward_flops), ("step", 3 * s.forward_flops)):
            row = {"model": s.name, "what": what, **rate(seconds[s.name, what], flops, peak_gflops)}
            table.append(row | {"ratio": seconds[s.name, what] / seconds[subjects[0].name, what]})
    return table


def training_rows(
    tokenizer: PreTrainedTokenizerBase, task: TaskConfig, profile: dict[str, Any], seed: int
) -> LabelledRows:
    """The task's training rows as `profile` prepares and encodes them (prepare's seeded
    subset of the local GLUE split, `shared.max_length`)."""
    prepare = typed(PrepareConfig, OmegaConf.create(profile["prepare"]))
    frame = prepare_task(task, prepare, glue_folder(), seed)["train"].frame
    max_length = profile["shared"]["max_length"]
    return labelled_rows(tokenizer, task, frame, max_length, f"{task.name} train")


def batch_orders(lengths: list[int], batch_size: int, seed: int) -> dict[str, list[list[int]]]:
    """One epoch's batches (row indices), length-grouped (the loop's) and plainly shuffled."""
    shuffled = [int(i) for i in np.random.default_rng(seed).permutation(len(lengths))]
    return {
        "grouped": length_grouped_batches(lengths, batch_size, seed),
        "shuffled": [shuffled[i : i + batch_size] for i in range(0, len(shuffled), batch_size)],
    }


def padding(lengths: list[int], batches: list[list[int]]) -> dict[str, float]:
    """Real and padded tokens of `batches`, and the padding as a share of the real tokens."""
    real = sum(lengths[i] for batch in batches for i in batch)
    padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    return {"real_tokens": real, "padded_tokens": padded, "padding": padded / real - 1}


def fine_tuning_steps(profile: dict[str, Any]) -> dict[str, int]:
    """Training steps of each task's fine-tuning process under `profile`: trained variants x
    epochs x batches of its prepared training rows (GLUE sizes, capped by prepare's limits)."""
    settings = typed(FinetuneConfig, OmegaConf.create(profile["finetune"]))
    prepare = typed(PrepareConfig, OmegaConf.create(profile["prepare"]))
    trained = sum(variant != "pretrained" for variant in settings.variants)
    steps = {}
    for task in profile["tasks"]:
        limit = prepare.row_limit(task, "train")
        rows = GLUE_SIZES[task][0] if limit is None else min(limit, GLUE_SIZES[task][0])
        steps[task] = trained * settings.epochs * math.ceil(rows / settings.batch_size)
    return steps


def against(seconds: dict[str, list[float]], default: str, mean: bool = False) -> dict[str, Any]:
    """Each candidate's median (or mean) seconds and its ratio to the default's."""
    center = statistics.fmean if mean else statistics.median
    base = center(seconds[default])
    return {name: {"seconds": center(s), "ratio": center(s) / base} for name, s in seconds.items()}


@dataclass(frozen=True)
class Batches:
    """Training batches of one task: rows and labels of each, the first a warm-up."""

    task: TaskConfig
    rows: list[Rows]
    labels: list[np.ndarray]

    @classmethod
    def of(cls, task: TaskConfig, data: LabelledRows, order: list[list[int]]) -> Batches:
        rows = [[data.rows[i] for i in batch] for batch in order]
        return cls(task, rows, [data.labels[batch] for batch in order])

    def step(
        self,
        subject: Subject,
        settings: FinetuneConfig,
        round_: int,
        model: torch.nn.Module | None = None,
    ) -> None:
        """One training step on batch `round_`, of `model` (default: the subject's)."""
        model = subject.model if model is None else model
        one_step(model, self.task, self.rows[round_], self.labels[round_], settings, subject.pad_id)


def compare_threads(
    subject: Subject, batches: Batches, settings: FinetuneConfig, threads: int
) -> dict[str, Any]:
    """Steps on one thread against `threads`, on the same batches."""

    def on(count: int) -> Callable[[int], None]:
        def step(round_: int) -> None:
            torch.set_num_threads(count)
            try:
                batches.step(subject, settings, round_)
            finally:
                torch.set_num_threads(threads)

        return step

    default = f"{threads} threads (default)"
    candidates = {default: on(threads), "1 thread": on(1)}
    return against(interleaved(candidates, len(batches.rows) - 1), default)


def _steps_from(start_at: float) -> tuple[float, float]:
    """In a worker: a copy of the shared model, a warm-up step, then the shared batches' steps
    from wall-clock time `start_at` on one thread; (start, end) of the timed steps."""
    subject, batches, settings = shared_data()
    model = copy.deepcopy(subject.model)  # its own: the pool shares the subject's memory
    batches.step(subject, settings, 0, model)
    time.sleep(max(start_at - time.time(), 0.0))
    start = time.time()
    for round_ in range(1, len(batches.rows)):
        batches.step(subject, settings, round_, model)
    return start, time.time()


def compare_side_by_side(
    subject: Subject,
    batches: Batches,
    settings: FinetuneConfig,
    threads: int,
    wait: float = 30.0,
) -> dict[str, Any]:
    """Two models trained one after the other on `threads` threads (as a finetune stage trains
    its fine-tuned and its random-init model) against the two side by side, each in a
    process of one thread, on the same batches: wall seconds of all the steps of both. The
    workers start their timed steps together, `wait` seconds after they are spawned (time
    to import and warm up); a worker still starting then begins when it is ready."""
    models = [copy.deepcopy(subject.model) for _ in range(2)]
    for model in models:
        batches.step(subject, settings, 0, model)  # warm-up
    start = time.perf_counter()
    for model in models:
        for round_ in range(1, len(batches.rows)):
            batches.step(subject, settings, round_, model)
    one_after_the_other = time.perf_counter() - start
    with worker_pool(2, (subject, batches, settings)) as pool:
        start_at = time.time() + wait
        spans = list(pool.map(_steps_from, [start_at, start_at]))
    side_by_side = max(end for _, end in spans) - min(begin for begin, _ in spans)
    default = f"one after the other, {threads} threads"
    return {
        default: {"seconds": one_after_the_other, "ratio": 1.0},
        "side by side, 1 thread each": {
            "seconds": side_by_side,
            "ratio": side_by_side / one_after_the_other,
        },
    }


def compare_optimizers(
    subject: Subject, batches: Batches, settings: FinetuneConfig, rounds: int, step_s: float
) -> dict[str, Any]:
    """`optimizer.step()` alone on the gradients of one real batch: AdamW as training.py
    builds it, `foreach` and `fused`; `share_of_step`: of a training step of `step_s` seconds."""
    model = subject.model.train()
    batch = collate(batches.rows[0], subject.pad_id)
    model(**batch, labels=torch.as_tensor(batches.labels[0])).loss.backward()
    default = _optimizer(model, settings, CPU)
    groups = [
        {"params": g["params"], "weight_decay": g["weight_decay"]} for g in default.param_groups
    ]
    options = {"lr": settings.learning_rate, "weight_decay": 0.0}
    optimizers = {
        "training.py's (loop)": default,
        "foreach": torch.optim.AdamW(groups, **options, foreach=True),
        "fused": torch.optim.AdamW(groups, **options, fused=True),
    }
    seconds = interleaved({k: lambda _, o=o: o.step() for k, o in optimizers.items()}, rounds)
    model.zero_grad(set_to_none=True)
    model.eval()
    table = against(seconds, "training.py's (loop)")
    return {k: v | {"share_of_step": v["seconds"] / step_s} for k, v in table.items()}


def compare_compile(
    subject: Subject, batches: Batches, settings: FinetuneConfig, steps: dict[str, int]
) -> dict[str, Any]:
    """Compiled (inductor) against eager steps on the same batches, in alternating order.

    Calls that compiled a graph count as compile time: their excess over the compiled steady
    state (the median compiled/eager ratio of the calls that compiled nothing, times the
    eager step of the same batch). The break-even is compile time / seconds saved per step.
    Inductor keeps compiled kernels in an on-disk cache: only a first run compiles cold."""
    from torch._dynamo.utils import counters

    compiled = torch.compile(subject.model)
    eager_s, compiled_s, graphs = [], [], []
    for round_ in range(len(batches.rows)):
        pair = [("eager", subject.model), ("compiled", compiled)]
        for name, model in pair if round_ % 2 else pair[::-1]:
            before = counters["stats"]["unique_graphs"]
            started = time.perf_counter()
            batches.step(subject, settings, round_, model)
            seconds = time.perf_counter() - started
            if name == "eager":
                eager_s.append(seconds)
            else:
                compiled_s.append(seconds)
                graphs.append(counters["stats"]["unique_graphs"] - before)
    steady = [c / e for c, e, g in zip(compiled_s, eager_s, graphs, strict=True) if not g]
    ratio = statistics.median(steady) if steady else math.nan
    compile_s = sum(c - ratio * e for c, e, g in zip(compiled_s, eager_s, graphs, strict=True) if g)
    eager_step = statistics.median(eager_s)
    saved = eager_step * (1 - ratio)  # seconds per step
    break_even = compile_s / saved if saved > 0 else math.inf
    return {
        "ratio": ratio,
        "eager_step_s": eager_step,
        "compile_s": compile_s,
        "graphs_per_call": graphs,
        "recompiling_calls": sum(bool(g) for g in graphs[1:]),
        "break_even_steps": break_even,
        "stage_saving": {
            task: (n * saved - compile_s) / (n * eager_step) for task, n in steps.items()
        },
    }


def compare_batching(
    subject: Subject, data: LabelledRows, task: TaskConfig, settings: FinetuneConfig, steps: int,
    seed: int,
) -> dict[str, Any]:  # fmt: skip
    """Padding of one epoch, length-grouped against shuffled, and the mean step time of the
    first `steps` batches of each order (one more batch each as warm-up)."""
    lengths = [len(row["input_ids"]) for row in data.rows]
    orders = batch_orders(lengths, settings.batch_size, seed)
    sampled = {name: Batches.of(task, data, order[: steps + 1]) for name, order in orders.items()}
    candidates = {
        name: lambda round_, b=b: b.step(subject, settings, round_) for name, b in sampled.items()
    }
    timed = against(interleaved(candidates, steps), "grouped", mean=True)
    return {name: timed[name] | padding(lengths, order) for name, order in orders.items()}


def load_subject(name: str, batch: int, length: int) -> Subject:
    """Model `name` (conf/model/<name>.yaml, real weights, a fresh 2-label head) and `batch`
    RTE dev pairs of `length` word pieces in its tokenizer."""
    settings = load_model(name)
    tokenizer = load_tokenizer(settings)
    model = load_classifier(settings, tokenizer, num_labels=2).eval()
    data = _rows(tokenizer, batch, length)
    shape = Shape.of_model(asdict(settings))
    return Subject(name, model, data.rows, data.labels, tokenizer.pad_token_id, shape)


def run(args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(args.threads)
    profile = profile_params("quick")
    peaks = [matmul_gflops()]
    subjects = [load_subject(name, args.batch, args.length) for name in args.model]
    seconds = time_models(subjects, step_settings(profile, args.batch), args.repeats)
    peaks.append(matmul_gflops())
    models = model_table(subjects, seconds, max(peaks))

    first, task = subjects[0], load_task(args.task)
    settings = step_settings(profile, profile["finetune"]["batch_size"])
    data = training_rows(load_tokenizer(load_model(first.name)), task, profile, profile["seed"])
    lengths = [len(row["input_ids"]) for row in data.rows]
    grouped = batch_orders(lengths, settings.batch_size, profile["seed"])["grouped"]
    batches = Batches.of(task, data, grouped[: args.steps + 1])
    variants: dict[str, Any] = {"threads": compare_threads(first, batches, settings, args.threads)}
    variants["two models"] = compare_side_by_side(first, batches, settings, args.threads)
    step_s = variants["threads"][f"{args.threads} threads (default)"]["seconds"]
    variants["optimizer"] = compare_optimizers(first, batches, settings, args.steps, step_s)
    variants["batching"] = compare_batching(
        first, data, task, settings, args.steps, profile["seed"]
    )
    steps = fine_tuning_steps(profile)
    if args.compile:
        variants["compile"] = compare_compile(first, batches, settings, steps)
    peaks.append(matmul_gflops())
    return {
        "load_average": os.getloadavg(),
        "threads": args.threads,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default"),
        "matmul_gflops": peaks,
        "models": models,
        "variants": variants,
        "quick_steps": steps,
    }


def markdown(result: dict[str, Any]) -> str:
    """The run's tables, as Markdown."""
    lines = [
        f"matmul peak {max(result['matmul_gflops']):.1f} GFLOP/s ({result['threads']} threads, "
        f"OpenMP wait policy {result['omp_wait_policy']}), "
        f"load average at the end {result['load_average'][0]:.1f}",
        "",
        "| model | what | seconds | GFLOP/s | of peak | ratio to first |",
        "|---|---|---|---|---|---|",
    ]
    for row in result["models"]:
        lines.append(
            f"| {row['model']} | {row['what']} | {row['seconds']:.2f} | {row['gflops']:.1f} "
            f"| {row['of_peak']:.0%} | {row['ratio']:.2f} |"
        )
    lines += [
        "",
        "| variant | candidate | seconds | ratio to default | note |",
        "|---|---|---|---|---|",
    ]
    variants = result["variants"]
    for group in ("threads", "two models", "optimizer", "batching"):
        for name, row in variants[group].items():
            note = ""
            if group == "optimizer":
                note = f"{row['share_of_step']:.1%} of a step"
            if group == "batching":
                note = f"padding {row['padding']:.0%} of real tokens"
            lines.append(
                f"| {group} | {name} | {row['seconds']:.3f} | {row['ratio']:.2f} | {note} |"
            )
    if "compile" in variants:
        c = variants["compile"]
        saving = ", ".join(f"{t} {v:+.0%}" for t, v in c["stage_saving"].items())
        lines.append(
            f"| compile | inductor, steady state | {c['ratio'] * c['eager_step_s']:.3f} "
            f"| {c['ratio']:.2f} | compile {c['compile_s']:.0f} s, {c['recompiling_calls']} "
            f"recompiling calls, break-even {c['break_even_steps']:.0f} steps; "
            f"stage saving {saving} |"
        )
    steps = ", ".join(f"{t} {n}" for t, n in result["quick_steps"].items())
    lines += ["", f"quick profile steps per fine-tuning process: {steps}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="conf/model/NAME.yaml (repeatable)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--task", default=TASK, help="the variants' training rows")
    parser.add_argument("--steps", type=int, default=8, help="timed batches per variant")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-compile", dest="compile", action="store_false")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args()
    args.model = args.model or ["minilm_l6", "mpnet_base"]
    result = run(args)
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
