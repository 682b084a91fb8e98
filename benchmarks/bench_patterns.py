"""The pattern CNN trained as one batched model against one network at a time.

    python -m benchmarks.bench_patterns [--networks 4] [--epochs 3] [--profile]
    python -m benchmarks.bench_patterns --quality [--workers 2] [--cv-ensemble K --ensemble K]

Under the stages' CPU-independent kernels (`pipeline.core.portable`) and one thread, the
first form trains the same networks (seeds 42, 43, ... on every labelled map of the shipped
label folder) twice, alternating: each alone as a torch module (`train.fit`), and all as one
batched model (`train.fit_stack`). It prints the CPU seconds of each, the ratio, and how far
the two sets of weights are apart; `--profile` adds the batched model's operator profile.

`--quality` runs the stage's whole training (cross-validation and the two final ensembles of
conf/patterns/default.yaml, `--workers` processes) both ways on the same labels and seeds,
and prints the wall and CPU time of each, their ratios, and the out-of-fold accuracy, kappa
and each class's F1; `--cv-ensemble` and `--ensemble` give smaller ensembles than the
configuration's, for a shorter check.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from omegaconf import OmegaConf

from pipeline.core.config import CONF_DIR
from pipeline.core.portable import shared_data, use_portable_kernels, worker_pool
from pipeline.core.schema import PatternClassifier, PatternRule
from pipeline.kovaleva.patterns.cnn import PatternCNN, inputs_of
from pipeline.kovaleva.patterns.train import (
    Job,
    fit,
    fit_all,
    fit_stack,
    load_labelled_set,
    train_classifier,
)

ROOT = Path(__file__).resolve().parent.parent
SEED = 42


def settings_of(group: str) -> PatternClassifier | PatternRule:
    """conf/patterns/default.yaml's `group` as its typed settings."""
    raw = OmegaConf.load(CONF_DIR / "patterns" / "default.yaml")[group]
    kind = {"classifier": PatternClassifier, "heuristic": PatternRule}[group]
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(kind), raw))


def cpu_seconds(run: Callable[[], object]) -> tuple[float, object]:
    """The CPU time of this process (and its finished children) spent in `run`, its result."""
    before = time.process_time(), _children()
    out = run()
    return time.process_time() - before[0] + _children() - before[1], out


def _children() -> float:
    """CPU seconds of this process's finished children (the worker processes)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def largest_gap(a: list[PatternCNN], b: list[PatternCNN]) -> float:
    """The largest difference of a weight between paired networks (conv biases, which batch
    normalisation cancels and Adam moves by rounding noise alone, and statistics left out)."""
    gaps = []
    for x, y in zip(a, b, strict=True):
        for name, tensor in x.state_dict().items():
            if name.endswith("weight"):
                gaps.append((tensor - y.state_dict()[name]).abs().max().item())
    return max(gaps)


def speed(args: argparse.Namespace, settings: PatternClassifier, folder: Path) -> None:
    labelled = load_labelled_set([folder])
    inputs = inputs_of(labelled.maps, settings.input_size)  # [N, 5, S, S]
    settings = replace(settings, epochs=args.epochs, average_last=min(2, args.epochs))
    jobs = [Job(np.arange(len(inputs)), SEED + i) for i in range(args.networks)]
    alone_runs, stacked_runs = [], []
    for _ in range(args.repeat):
        seconds, alone = cpu_seconds(
            lambda: [fit(inputs, labelled.labels, settings, job.seed) for job in jobs]
        )
        alone_runs.append(seconds)
        seconds, stacked = cpu_seconds(lambda: fit_stack(inputs, labelled.labels, settings, jobs))
        stacked_runs.append(seconds)
    one, batched = min(alone_runs), min(stacked_runs)
    steps = args.networks * args.epochs * -(-len(inputs) // settings.batch_size)
    print(f"{args.networks} networks x {args.epochs} epochs on {len(inputs)} maps, one thread")
    print(f"one at a time: {one:7.2f} CPU s ({1000 * one / steps:.2f} ms per network-step)")
    print(f"batched:       {batched:7.2f} CPU s ({1000 * batched / steps:.2f} ms per network-step)")
    print(f"ratio (one at a time / batched): {one / batched:.2f}")
    print(f"largest weight gap between the two: {largest_gap(alone, stacked):.2e}")
    if args.profile:
        from torch.profiler import profile

        with profile() as prof:
            fit_stack(inputs, labelled.labels, replace(settings, epochs=1, average_last=0), jobs)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


def _fit_alone(job: Job) -> dict[str, torch.Tensor]:
    """A worker's network trained alone, on the inputs, labels and settings its pool shares."""
    inputs, labels, settings = shared_data()
    return fit(inputs[job.rows], labels[job.rows], settings, job.seed).state_dict()


def one_at_a_time(
    inputs: torch.Tensor,
    labels: np.ndarray,
    settings: PatternClassifier,
    jobs: list[Job],
    workers: int,
) -> list[PatternCNN]:
    """`fit_all` with each network trained alone as a torch module (`fit`)."""
    with worker_pool(max(workers, 1), (inputs, labels, settings)) as pool:
        states = list(pool.map(_fit_alone, jobs))
    networks = []
    for state in states:
        networks.append(PatternCNN(settings.channels, settings.dropout))
        networks[-1].load_state_dict(state)
    return networks


def quality(args: argparse.Namespace, settings: PatternClassifier, folder: Path) -> None:
    settings = replace(
        settings,
        workers=args.workers,
        cv_ensemble=args.cv_ensemble or settings.cv_ensemble,
        ensemble=args.ensemble or settings.ensemble,
    )
    print(f"networks per fold {settings.cv_ensemble}, per final ensemble {settings.ensemble}")
    rule = settings_of("heuristic")
    rows, times, cpu = {}, {}, {}
    for name, fit_networks in (("one at a time", one_at_a_time), ("batched", fit_all)):
        started = time.perf_counter()
        cpu[name], trained = cpu_seconds(
            lambda fit_networks=fit_networks: train_classifier(
                [folder], settings, rule, SEED, fit_networks
            )
        )
        times[name] = time.perf_counter() - started
        rows[name] = {
            k.removeprefix("cnn."): v
            for k, v in trained.metrics.items()
            if k.startswith("cnn.") and not k.endswith(("_low", "_high"))
        }
    print(pd.DataFrame(rows).round(4).to_string())
    for name, seconds in times.items():
        print(f"{name}: {seconds:.1f} s wall, {cpu[name]:.1f} CPU s ({settings.workers} workers)")
    one, batched = "one at a time", "batched"
    print(f"ratio (one at a time / batched): {times[one] / times[batched]:.2f} wall, ", end="")
    print(f"{cpu[one] / cpu[batched]:.2f} CPU")


def main() -> None:
    use_portable_kernels()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=ROOT / "data" / "annotations" / "minilm_l6")
    parser.add_argument("--networks", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cv-ensemble", type=int, default=None)
    parser.add_argument("--ensemble", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = settings_of("classifier")
    (quality if args.quality else speed)(args, settings, args.labels)


if __name__ == "__main__":
    main()
