"""The project's fine-tuning loop against the transformers `Trainer`, side by side in one
process: the same model, the same batches, the same precision, alternating in rounds.

    python -m benchmarks.bench_trainer [--model bert-base-shaped --model mpnet-base-shaped]
        [--device cpu] [--precision fp32] [--profile paper] [--task rte] [--batch N]
        [--length N] [--steps 4] [--rounds 3] [--threads 2] [--compile] [--deterministic]
        [--json PATH]

Models (`--model`): `bert-base-shaped` and `mpnet-base-shaped` are classifiers of the family's
default configuration (bert-base's and MPNet-base's shapes) with random weights, whose speed
does not depend on the weights; any other name is conf/model/<name>.yaml as the project
loads it (`tiny_random` for small runs, `mpnet_base` for the real MPNet). Both sides start
from copies of the same weights.

Batches, two workloads per model, each side running `--steps` steps per round:
- `fixed`: `--batch` RTE dev pairs of exactly `--length` word pieces (bench_cost's inputs);
- `<task>`: the task's local training rows at the profile's `shared.max_length`, in
  `length_grouped_batches` batches of `--batch` (as an epoch of the loop draws them).

Each round hands both sides the same rows: the loop as `pipeline.models.training.train` (one
epoch over the round's rows), the `Trainer` as `Trainer.train()` over the same rows in the
order `train` itself draws them (`length_grouped_batches` with the run's seed, laid end to end
and read in sequence by the `Trainer`: a round holds full batches only, so the `Trainer`'s cuts
fall where the loop's batches end), padded by the project's `collate`. So the two train on
identical batches; a forward hook on
each model records what it was called on (examples, padded and real tokens, a digest of the
ids), and the result says whether the two sides' records agree. The `Trainer` gets its best
documented settings: `adamw_torch_fused`, the run's precision (bf16/fp16 autocast), pinned
memory on CUDA and `torch_compile` when `--compile` compiles the loop's model as well; its own
`group_by_length` sampler would draw other batches, so its padding on one epoch of the task
is reported beside the loop's instead. The optimizer (the loop's AdamW, fused on CUDA only),
the schedule (linear warm-up and decay) and clipping follow the profile's `finetune` settings
on both sides. Both sides run under the same `deterministic` setting (`set_determinism`
before each call; `--deterministic` for deterministic kernels, the project's setting in its
CPU profiles; default off, the paper profile's). The result records it and the `Trainer`'s
`TrainingArguments` (`trainer_arguments`, without its temporary output folder).

Round 0 warms both sides up and is not kept; the order of the two alternates between rounds.
The steady steps of a round run from its second forward to its last, the device synchronised
at both (so neither side's set-up nor its wrap-up counts, and a side that queues work ahead
is timed by its device). Reported per side, the median over rounds of: the steady step's
seconds, examples per second, GFLOP/s (bench_cost's FLOP count on the padded batches; a step
is 3x the forward) and their share of the matmul rate in the run's compute dtype, measured
before and after in the same process (the higher of the two); the set-up (from the call to
its first forward: each side builds its optimizer and schedule every call) and the examples
per second of the whole call, the device synchronised at its end. And the loop's steady
examples per second over the `Trainer`'s.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import SequentialSampler
from transformers import PreTrainedModel, PreTrainedTokenizerBase, Trainer, TrainingArguments
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from transformers.trainer_pt_utils import LengthGroupedSampler

from benchmarks.bench_cost import Shape, _clock, _rows, glue_folder, matmul_gflops, profile_params
from benchmarks.bench_step import interleaved, padding, step_settings
from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.errors import PipelineError
from pipeline.core.precision import device_dtype, set_determinism
from pipeline.core.schema import ModelConfig, TaskConfig, load_model, load_task
from pipeline.data.batching import length_grouped_batches
from pipeline.data.encoding import collate
from pipeline.data.glue import read_local_split
from pipeline.models.labelled import LabelledRows, labelled_rows
from pipeline.models.loading import load_classifier, load_tokenizer
from pipeline.models.training import _targets, train

SHAPED = {"bert-base-shaped": "bert", "mpnet-base-shaped": "mpnet"}  # name -> model_type
SIDES = ("loop", "trainer")


def model_settings(name: str) -> ModelConfig:
    """`name`'s model: a family's default configuration with random weights (SHAPED, with
    tiny_random's tokenizer), else conf/model/<name>.yaml."""
    if name in SHAPED:
        return replace(
            load_model("tiny_random"), name=name, random_config={"model_type": SHAPED[name]}
        )
    return load_model(name)


@dataclass(frozen=True)
class Workload:
    """Rows for each round (round 0 the warm-up), every round `steps` batches."""

    name: str
    task: TaskConfig
    rounds: list[LabelledRows]


def split_rounds(data: LabelledRows, batches: list[list[int]], steps: int) -> list[LabelledRows]:
    """Consecutive groups of `steps` batches (row indices), each group's rows in one round."""
    groups = [batches[i : i + steps] for i in range(0, len(batches) - steps + 1, steps)]
    chosen = [[i for batch in group for i in batch] for group in groups]
    return [LabelledRows([data.rows[i] for i in rows], data.labels[rows]) for rows in chosen]


def fixed_workload(
    tokenizer: PreTrainedTokenizerBase, batch: int, length: int, steps: int, rounds: int
) -> Workload:
    """`batch` x `length` batches of RTE dev pairs, every row exactly `length` pieces."""
    data = _rows(tokenizer, batch * steps * (rounds + 1), length)
    batches = [list(range(i, i + batch)) for i in range(0, len(data), batch)]
    return Workload(
        f"fixed {batch} x {length}", load_task("rte"), split_rounds(data, batches, steps)
    )


def task_rows(
    tokenizer: PreTrainedTokenizerBase, task: TaskConfig, max_length: int
) -> LabelledRows:
    """The task's local training split, encoded at `max_length`."""
    frame, _ = read_local_split(glue_folder(), task, "train")
    return labelled_rows(tokenizer, task, frame, max_length, f"{task.name} train")


def task_workload(
    data: LabelledRows, task: TaskConfig, batch: int, steps: int, rounds: int, seed: int
) -> Workload:
    """The first (rounds + 1) x `steps` batches of one epoch of the task in the loop's
    length-grouped order."""
    lengths = [len(row["input_ids"]) for row in data.rows]
    batches = length_grouped_batches(lengths, batch, seed)
    needed = steps * (rounds + 1)
    full = [b for b in batches if len(b) == batch][:needed]
    if len(full) < needed:
        raise PipelineError(
            f"{task.name}: {len(full)} full batches of {batch}, {needed} needed; "
            "lower --steps, --rounds or --batch"
        )
    return Workload(f"{task.name}, length-grouped", task, split_rounds(data, full, steps))


def grouping_padding(lengths: list[int], batch: int, seed: int) -> dict[str, dict[str, float]]:
    """Padding of one epoch in batches of `batch`: the loop's `length_grouped_batches`, and
    the `Trainer`'s `group_by_length` sampler's order cut in sequence (as its data loader
    cuts it)."""
    generator = torch.Generator().manual_seed(seed)
    order = list(LengthGroupedSampler(batch, lengths=lengths, generator=generator))
    return {
        "loop: length_grouped_batches": padding(
            lengths, length_grouped_batches(lengths, batch, seed)
        ),
        "trainer: group_by_length": padding(
            lengths, [order[i : i + batch] for i in range(0, len(order), batch)]
        ),
    }


@dataclass
class Round:
    """One timed call of `steps` steps: its start and end (the device synchronised), the
    start of its first forward, of its second and of its last (the device synchronised at
    both: the steady steps lie between), and each forward's input ids and attention mask
    ([B, T] each), read only after the timing."""

    steps: int
    start: float
    first_forward: float = math.nan
    second_forward: float = math.nan
    last_forward: float = math.nan
    end: float = math.nan
    calls: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)


class Ledger:
    """What a model was called on, and when, call by call of one side (`Round`s)."""

    def __init__(self, model: torch.nn.Module, device: torch.device) -> None:
        self.device = device
        self.rounds: list[Round] = []
        self.handle = model.register_forward_pre_hook(self._record, with_kwargs=True)

    @torch.compiler.disable  # runs eagerly under torch.compile too (a graph break)
    def _record(self, module, args, kwargs) -> None:
        current = self.rounds[-1]
        if not current.calls:
            current.first_forward = time.perf_counter()
        elif len(current.calls) == 1:
            current.second_forward = _clock(self.device)
        if len(current.calls) == current.steps - 1:
            current.last_forward = _clock(self.device)
        current.calls.append((kwargs["input_ids"], kwargs["attention_mask"]))

    @contextmanager
    def timing(self, steps: int) -> Iterator[None]:
        """Time one call of `steps` steps as a new round, to the end of the device's work."""
        self.rounds.append(Round(steps, time.perf_counter()))
        yield
        self.rounds[-1].end = _clock(self.device)

    def summary(self, round_: int, shape: Shape) -> dict[str, Any]:
        """Round `round_`: its batches (examples, padded and real tokens, a digest of every
        batch's real ids in order), its seconds whole and before the first forward (set-up),
        and the steady steps, from the second forward to the last: seconds, examples and
        training FLOPs (3x the forward on the padded batches)."""
        timed = self.rounds[round_]
        digest = hashlib.sha256()
        examples = padded = real = 0
        for ids, mask in timed.calls:
            ids, mask = ids.cpu(), mask.cpu().bool()
            examples, padded, real = (
                examples + len(ids),
                padded + ids.numel(),
                real + int(mask.sum()),
            )
            for row, keep in zip(ids, mask, strict=True):
                digest.update(row[keep].numpy().astype(np.int64).tobytes() + b"|")
            digest.update(b"#")
        steady = timed.calls[1:-1]
        return {
            "batches": len(timed.calls),
            "examples": examples,
            "padded_tokens": padded,
            "real_tokens": real,
            "digest": digest.hexdigest()[:16],
            "call_s": timed.end - timed.start,
            "setup_s": timed.first_forward - timed.start,
            "steady_s": timed.last_forward - timed.second_forward,
            "steady_examples": sum(len(ids) for ids, _ in steady),
            "steady_flops": sum(
                3 * len(ids) * shape.forward_flops(ids.shape[1]) for ids, _ in steady
            ),
        }


class InOrderTrainer(Trainer):
    """The `Trainer`, reading its training rows in the dataset's order (which is the loop's
    length-grouped order), so that its batches are the loop's."""

    def _get_train_sampler(self, *args: Any, **kwargs: Any) -> SequentialSampler:
        return SequentialSampler(self.train_dataset)


def trainer_arguments(
    settings: FinetuneConfig, precision: str, device: torch.device, compile_: bool, folder: str,
    seed: int,
) -> TrainingArguments:  # fmt: skip
    """The `Trainer`'s settings: the profile's recipe, and its fastest documented options."""
    dtype = device_dtype(precision, device)
    parameters = TrainingArguments.__init__.__code__.co_varnames
    # transformers 5.24 takes the warm-up ratio as a float warmup_steps; older 5.x as warmup_ratio
    warmup = "warmup_ratio" if "warmup_ratio" in parameters else "warmup_steps"
    return TrainingArguments(
        output_dir=folder,
        per_device_train_batch_size=settings.batch_size,
        num_train_epochs=1,
        learning_rate=settings.learning_rate,
        weight_decay=settings.weight_decay,
        max_grad_norm=settings.grad_clip,
        lr_scheduler_type="linear",
        **{warmup: settings.warmup_ratio},
        optim="adamw_torch_fused",
        bf16=dtype == torch.bfloat16,
        fp16=dtype == torch.float16,
        dataloader_pin_memory=device.type == "cuda",
        torch_compile=compile_,
        use_cpu=device.type == "cpu",
        seed=seed,
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
        remove_unused_columns=False,
    )


def recorded_arguments(arguments: TrainingArguments) -> dict[str, Any]:
    """The `Trainer`'s settings as a record keeps them: every argument but the output folder."""
    kept = arguments.to_dict()
    kept.pop("output_dir", None)
    return json.loads(json.dumps(kept, default=str))


def labelled_collator(task: TaskConfig, pad_id: int) -> Callable[[list[dict]], dict]:
    """The `Trainer`'s collator: the project's `collate` of the rows, and their targets."""

    def collate_with_labels(features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        rows = [{k: v for k, v in f.items() if k != "labels"} for f in features]
        labels = np.array([f["labels"] for f in features])
        return collate(rows, pad_id) | {"labels": _targets(task, labels, torch.device("cpu"))}

    return collate_with_labels


@dataclass
class Sides:
    """The loop's and the `Trainer`'s runs on one model, each with its own copy of it."""

    task: TaskConfig
    settings: FinetuneConfig
    device: torch.device
    precision: str
    seed: int
    pad_id: int
    deterministic: bool
    loop_model: torch.nn.Module
    trainer: Trainer
    ledgers: dict[str, Ledger]

    def loop(self, rows: LabelledRows) -> None:
        """One epoch of the loop over `rows` (it draws them in `length_grouped_batches`)."""
        train(
            self.loop_model, self.task, rows.rows, rows.labels, self.settings, self.seed,
            self.pad_id, self.device, description="loop", precision=self.precision,
            deterministic=self.deterministic,
        )  # fmt: skip

    def in_loop_order(self, rows: LabelledRows) -> list[dict[str, Any]]:
        """`rows` with their labels, the loop's batches (epoch 0) end to end; the `Trainer`
        cuts them in sequence, which keeps them whole only if no short batch comes before
        the last."""
        lengths = [len(r["input_ids"]) for r in rows.rows]
        batches = length_grouped_batches(lengths, self.settings.batch_size, self.seed)
        if any(len(b) < self.settings.batch_size for b in batches[:-1]):
            raise PipelineError(
                f"{len(rows.rows)} rows do not make full batches of {self.settings.batch_size}: "
                "the Trainer would cut other batches than the loop's; give whole batches"
            )
        return [rows.rows[i] | {"labels": rows.labels[i].item()} for b in batches for i in b]

    def hugging_face(self, rows: LabelledRows) -> None:
        """One epoch of the `Trainer` over `rows`, in the loop's order, under the same
        determinism as the loop."""
        self.trainer.train_dataset = self.in_loop_order(rows)
        set_determinism(self.deterministic, self.device)
        self.trainer.train()

    def candidates(self, workload: Workload) -> dict[str, Callable[[int], None]]:
        """Each side as a call on round `r` of `workload`, timed up to its device's end."""

        def timed(side: str, fit: Callable[[LabelledRows], None]) -> Callable[[int], None]:
            def call(round_: int) -> None:
                rows = workload.rounds[round_]
                with self.ledgers[side].timing(-(-len(rows) // self.settings.batch_size)):
                    fit(rows)

            return call

        return {"loop": timed("loop", self.loop), "trainer": timed("trainer", self.hugging_face)}


@contextmanager
def sides(
    model: PreTrainedModel, task: TaskConfig, settings: FinetuneConfig, args: argparse.Namespace,
    pad_id: int, seed: int,
) -> Iterator[Sides]:  # fmt: skip
    """Both sides on copies of `model`, their ledgers attached to the copies (under any
    `torch.compile` wrapper)."""
    device = torch.device(args.device)
    copies = {side: copy.deepcopy(model).to(device) for side in SIDES}
    ledgers = {side: Ledger(copies[side], device) for side in SIDES}
    loop_model = torch.compile(copies["loop"]) if args.compile else copies["loop"]
    with tempfile.TemporaryDirectory() as folder:
        arguments = trainer_arguments(settings, args.precision, device, args.compile, folder, seed)
        trainer = InOrderTrainer(
            model=copies["trainer"],
            args=arguments,
            data_collator=labelled_collator(task, pad_id),
        )
        for callback in (PrinterCallback, ProgressCallback):
            trainer.remove_callback(callback)
        yield Sides(
            task, settings, device, args.precision, seed, pad_id, args.deterministic, loop_model,
            trainer, ledgers,
        )  # fmt: skip
    for ledger in ledgers.values():
        ledger.handle.remove()


BATCH_KEYS = ("batches", "examples", "padded_tokens", "real_tokens", "digest")


def side_summary(kept: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's kept rounds: medians of the steady step, its examples/s and GFLOP/s, of the
    set-up and of the whole call (examples/s with the set-up)."""
    return {
        "step_s": statistics.median(k["steady_s"] / (k["batches"] - 2) for k in kept),
        "examples_per_s": statistics.median(k["steady_examples"] / k["steady_s"] for k in kept),
        "gflops": statistics.median(k["steady_flops"] / k["steady_s"] / 1e9 for k in kept),
        "setup_s": statistics.median(k["setup_s"] for k in kept),
        "call_examples_per_s": statistics.median(k["examples"] / k["call_s"] for k in kept),
        "rounds": kept,
    }


def side_by_side(found: Sides, workload: Workload, rounds: int, shape: Shape) -> dict[str, Any]:
    """Both sides on `workload`, alternating in rounds after a warm-up; per side its
    `side_summary`, the loop's speed over the `Trainer`'s, and per round whether the two
    trained on the same batches."""
    interleaved(found.candidates(workload), rounds)
    result: dict[str, Any] = {"workload": workload.name}
    for side in SIDES:
        kept = [found.ledgers[side].summary(r, shape) for r in range(1, rounds + 1)]
        result[side] = side_summary(kept)
    loop, trainer = result["loop"], result["trainer"]
    result["loop_over_trainer"] = loop["examples_per_s"] / trainer["examples_per_s"]
    result["same_batches"] = [
        all(mine[key] == theirs[key] for key in BATCH_KEYS)
        for mine, theirs in zip(loop["rounds"], trainer["rounds"], strict=True)
    ]
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    profile = profile_params(args.profile)
    batch = args.batch or profile["finetune"]["batch_size"]
    max_length = profile["shared"]["max_length"]
    length = args.length or max_length
    settings = step_settings(profile, batch)
    seed, task = profile["seed"], load_task(args.task)
    peaks = [matmul_gflops(device, args.precision)]
    comparisons, padded = [], None
    for name in args.model:
        model_config = model_settings(name)
        tokenizer = load_tokenizer(model_config)
        shape = Shape.of_model(asdict(model_config))
        data = task_rows(tokenizer, task, max_length)
        workloads = [
            fixed_workload(tokenizer, batch, length, args.steps, args.rounds),
            task_workload(data, task, batch, args.steps, args.rounds, seed),
        ]
        if padded is None:
            lengths = [len(row["input_ids"]) for row in data.rows]
            padded = grouping_padding(lengths, batch, seed)
        for workload in workloads:
            labels = workload.task.num_labels
            model = load_classifier(model_config, tokenizer, num_labels=labels, seed=seed)
            with sides(model, workload.task, settings, args, tokenizer.pad_token_id, seed) as both:
                result = side_by_side(both, workload, args.rounds, shape)
            comparisons.append({"model": name, "shape": asdict(shape)} | result)
    peaks.append(matmul_gflops(device, args.precision))
    peak = max(peaks)
    for comparison in comparisons:
        for side in SIDES:
            comparison[side]["of_peak"] = comparison[side]["gflops"] / peak
    dtype = str(device_dtype(args.precision, device)).removeprefix("torch.")
    with tempfile.TemporaryDirectory() as folder:
        arguments = trainer_arguments(settings, args.precision, device, args.compile, folder, seed)
    return {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "precision": args.precision,
        "dtype": dtype,
        "threads": args.threads,
        "compile": args.compile,
        "deterministic": args.deterministic,
        "trainer_arguments": recorded_arguments(arguments),
        "load_average": os.getloadavg(),
        "profile": args.profile,
        "batch": batch,
        "steps_per_round": args.steps,
        "rounds": args.rounds,
        "matmul_gflops": peaks,
        "comparisons": comparisons,
        "padding": {"task": task.name, "batch": batch, **padded},
    }


def markdown(result: dict[str, Any]) -> str:
    """The run's table, as Markdown."""
    lines = [
        f"{result['device']}, {result['dtype']}, compile {result['compile']}"
        + (f", deterministic {result['deterministic']}" if "deterministic" in result else "")
        + f": matmul rate "
        f"{max(result['matmul_gflops']):.1f} GFLOP/s; {result['steps_per_round']} steps per "
        f"round, median of {result['rounds']} rounds; load average at the end "
        f"{result['load_average'][0]:.1f}",
        "",
        "| model | batches | side | step (ms) | examples/s | GFLOP/s | of matmul rate "
        "| loop / Trainer, examples/s | set-up per call (s) | examples/s with set-up "
        "| same batches |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in result["comparisons"]:
        for side in SIDES:
            s = c[side]
            ratio = f"{c['loop_over_trainer']:.2f}" if side == "loop" else ""
            same = ("yes" if all(c["same_batches"]) else "NO") if side == "loop" else ""
            lines.append(
                f"| {c['model']} | {c['workload']} | {side} | {1000 * s['step_s']:.1f} "
                f"| {s['examples_per_s']:.1f} | {s['gflops']:.1f} | {s['of_peak']:.1%} "
                f"| {ratio} | {s['setup_s']:.2f} | {s['call_examples_per_s']:.1f} | {same} |"
            )
    p = result["padding"]
    pads = ", ".join(
        f"{name} {row['padding']:.0%}" for name, row in p.items() if isinstance(row, dict)
    )
    lines += ["", f"padding of one epoch of {p['task']} in batches of {p['batch']}: {pads}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="a SHAPED name or conf/model/NAME.yaml")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--precision", default="fp32", choices=["auto", "fp32", "bf16", "fp16"])
    parser.add_argument("--profile", default="paper", help="conf/experiment/PROFILE.yaml")
    parser.add_argument("--task", default="rte", help="the length-grouped batches' task")
    parser.add_argument("--batch", type=int, help="rows per batch (default: the profile's)")
    parser.add_argument("--length", type=int, help="fixed batches' length (default: max_length)")
    parser.add_argument("--steps", type=int, default=4, help="steps per side and round (3+)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds, after a warm-up")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--compile", action="store_true", help="torch.compile on both sides")
    parser.add_argument(
        "--deterministic", action="store_true", help="deterministic kernels on both sides"
    )
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args()
    if args.steps < 3:
        parser.error("--steps: at least 3 (the steady steps lie between the first and the last)")
    args.model = args.model or list(SHAPED)
    result = run(args)
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
