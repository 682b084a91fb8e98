"""The pattern CNN trained as one batched model against one network at a time.

    python -m benchmarks.bench_patterns [--networks 4] [--epochs 3] [--profile]
    python -m benchmarks.bench_patterns --floor [--networks 4]
    python -m benchmarks.bench_patterns --quality [--workers 2] [--cv-ensemble K --ensemble K]

Under the stages' CPU-independent kernels (`pipeline.core.portable`) and one thread, the
first form trains the same networks (seeds 42, 43, ... on every labelled map of the stage's
label folders, or of `--labels`) twice, alternating: each alone as a torch module
(`train.fit`), and all as one batched model (`train.fit_stack`). It prints the CPU seconds of
each, the ratio, and how far the two sets of weights are apart; `--profile` adds the batched
model's operator profile.

`--floor` adds what no form of the training can beat under these kernels: the networks'
convolution products alone (forward, weight and input gradients; FLOP counted from the
architecture), timed at the batched model's own shapes and at the kernels' best rate on
square products, both measured in the same run on one thread. Dividing the one-at-a-time CPU
seconds by the lower floor gives the largest ratio that any form of the training could reach
if everything but these products cost nothing. It also prints the floor of the stage's whole
training on the same maps (its folds, ensembles and epochs; on `--workers` cores).

`--quality` runs the stage's whole training (cross-validation and the two final ensembles of
conf/patterns/default.yaml, `--workers` processes) both ways on the same labels and seeds,
and prints the wall and CPU time of each, their ratios, and the out-of-fold accuracy, kappa
and each class's F1; `--cv-ensemble` and `--ensemble` give smaller ensembles than the
configuration's, for a shorter check.
"""

from __future__ import annotations

import argparse
import math
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
from pipeline.kovaleva.patterns.cnn import IN_CHANNELS, PatternCNN, inputs_of
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


def speed(args: argparse.Namespace, settings: PatternClassifier, folders: list[Path]) -> None:
    labelled = load_labelled_set(folders)
    inputs = inputs_of(labelled.maps, settings.input_size)  # [N, 5, S, S]
    stage_passes = stage_map_passes(settings, len(inputs))
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
    if args.floor:
        passes = args.epochs * len(inputs)
        arithmetic_floor(settings, args.networks, passes, one, stage_passes, args.workers)
    if args.profile:
        from torch.profiler import profile

        with profile() as prof:
            fit_stack(inputs, labelled.labels, replace(settings, epochs=1, average_last=0), jobs)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


def convolution_products(
    settings: PatternClassifier, networks: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The batched model's matrix products for one batch of `settings.batch_size` maps, as
    (left [G, M, K], right [G, K, N]) pairs: per layer the forward product (weights [O, C * 9]
    by columns [C * 9, B * H * W]), the weight gradient, and the input gradient (not for
    the first layer, whose input needs none)."""
    products, width, side = [], IN_CHANNELS, settings.input_size
    for i, out in enumerate(settings.channels):
        k, n = width * 9, settings.batch_size * side * side

        def pair(m: int, inner: int, cols: int) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.randn(networks, m, inner), torch.randn(networks, inner, cols)

        products += [pair(out, k, n), pair(out, n, k)] + ([pair(k, out, n)] if i else [])
        width, side = out, side // 2 if i % 2 else side
    return products


def product_flop(left: torch.Tensor, right: torch.Tensor) -> int:
    """FLOP of `torch.bmm(left, right)`, left [G, M, K] by right [G, K, N]."""
    g, m, k = left.shape
    return 2 * g * m * k * right.shape[2]


def best_rate(left: torch.Tensor, right: torch.Tensor, repeat: int = 7) -> float:
    """GFLOP/s of `torch.bmm(left, right)` (left [G, M, K], right [G, K, N]): the best of
    `repeat` timings (CPU clock) of as many calls as take about 50 ms, after a warm-up."""
    started = time.process_time()
    torch.bmm(left, right)
    calls = max(1, math.ceil(0.05 / max(time.process_time() - started, 1e-6)))
    best = math.inf
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(calls):
            torch.bmm(left, right)
        best = min(best, (time.process_time() - started) / calls)
    return product_flop(left, right) / best / 1e9


def stage_map_passes(settings: PatternClassifier, maps: int) -> int:
    """Maps that patterns_train's networks pass over, each pass a forward and a backward:
    every map trains the `cv_ensemble` networks of the folds it is not held out of, and the
    `ensemble` networks of both final ensembles, for `epochs` epochs."""
    per_epoch = settings.cv_ensemble * (settings.folds - 1) * maps + 2 * settings.ensemble * maps
    return settings.epochs * per_epoch


def arithmetic_floor(
    settings: PatternClassifier,
    networks: int,
    map_passes: int,
    one_at_a_time_s: float,
    stage_passes: int,
    workers: int,
) -> None:
    """Print the seconds that the convolution products of `networks` networks trained on
    `map_passes` maps (epochs x maps) take at the batched shapes' measured rate and at the
    square products' best, the largest ratio to `one_at_a_time_s` each leaves, and the
    stage's floor: `stage_passes` network-map passes on `workers` cores."""
    products = convolution_products(settings, networks)
    flops = [product_flop(a, b) for a, b in products]
    seconds = [f / best_rate(a, b) / 1e9 for f, (a, b) in zip(flops, products, strict=True)]
    rates = {
        "the batched shapes": sum(flops) / sum(seconds) / 1e9,
        "square products (best of 256-1024)": max(
            best_rate(torch.randn(1, n, n), torch.randn(1, n, n)) for n in (256, 512, 1024)
        ),
    }
    per_map = sum(flops) / networks / settings.batch_size  # FLOP per map and network
    total = per_map * networks * map_passes  # FLOP of the whole run
    print(f"convolution products: {per_map / 1e6:.2f} MFLOP per map and network, ", end="")
    print(f"{total / 1e12:.3f} TFLOP in all")
    for name, rate in rates.items():
        floor = total / rate / 1e9
        print(f"floor at {name}: {rate:.1f} GFLOP/s -> {floor:.2f} CPU s; ", end="")
        print(f"largest possible ratio (one at a time / floor): {one_at_a_time_s / floor:.2f}")
    stage = per_map * stage_passes  # FLOP of the stage's training
    best = max(rates.values())
    print(
        f"the stage's training on these maps: {stage / 1e12:.2f} TFLOP; at {best:.1f} GFLOP/s",
        end="",
    )
    print(f" on each of {workers} cores its floor is {stage / best / 1e9 / workers:.0f} s")


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


def quality(args: argparse.Namespace, settings: PatternClassifier, folders: list[Path]) -> None:
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
                folders, settings, rule, SEED, fit_networks
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
    stage_folders = OmegaConf.load(CONF_DIR / "patterns" / "default.yaml").labels_from
    parser.add_argument(
        "--labels",
        type=Path,
        nargs="+",
        default=[ROOT / "data" / "annotations" / name for name in stage_folders],
        help="label folders (default: the stage's, conf/patterns/default.yaml's labels_from)",
    )
    parser.add_argument("--networks", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--floor", action="store_true")
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
