"""Processes whose float results are meant not to depend on which x86-64 CPU runs them.

PyTorch's own kernels (ATen), oneDNN and MKL each pick vector code from the CPU at run time
(SSE, AVX2, AVX-512). Kernels of different widths add floats in different orders, and a
network trained for thousands of steps turns those last-bit differences into different
weights (the pattern CNN's scores differed between two machines running one commit). A
process that calls `use_portable_kernels` first, and every worker it spawns, computes with

- `ATEN_CPU_CAPABILITY=default`: ATen's baseline kernels, the same code on every x86-64 CPU;
- `MKL_CBWR=COMPATIBLE`: MKL's conditional numerical reproducibility, the same results on
  every CPU for one MKL version and thread count;
- oneDNN turned off (convolutions run as ATen's im2col and MKL matrix products).

The libraries read both variables once, when they first compute, so a process that lacks them
is restarted with them (`os.execv`, same command line). The DVC stages that compute this way
get them from their command in dvc.yaml and need no restart (pipeline/dag/declarations.py).
It is checked for one build of torch and MKL against older x86-64 CPUs emulated on one CPU
(tests/core/test_portable.py). Between two real CPUs it did not hold: an Intel Xeon (AVX-512)
trained other weights than an AMD EPYC (docs/benchmarks.md, "The pattern CNN on other
CPUs"). ARM builds and other library versions may differ too.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import torch

PORTABLE_ENV = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}


def use_portable_kernels() -> None:
    """Compute with CPU-independent kernels from here on: restart this process with
    PORTABLE_ENV unless its environment has it, then turn oneDNN off. Call it before any
    tensor is computed."""
    missing = {key: value for key, value in PORTABLE_ENV.items() if os.environ.get(key) != value}
    if missing:
        os.environ.update(missing)
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    torch.backends.mkldnn.enabled = False


# What `worker_pool` sent this worker process once, for every task it runs.
_shared: object = None


def _start_worker(shared: object) -> None:
    """Runs first in each worker: the parent's kernels (its environment is inherited, oneDNN
    is not), one thread, and the pool's shared data kept for `shared_data`."""
    global _shared
    if all(os.environ.get(key) == value for key, value in PORTABLE_ENV.items()):
        torch.backends.mkldnn.enabled = False
    torch.set_num_threads(1)
    _shared = shared


def shared_data() -> object:
    """In a worker of `worker_pool`: the `shared` object its pool was opened with."""
    if _shared is None:
        raise RuntimeError("shared_data() runs only in a worker of worker_pool")
    return _shared


@contextlib.contextmanager
def worker_pool(workers: int, shared: object) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` spawned processes with one torch thread each, computing with the
    kernels of the process that opens it (portable ones after `use_portable_kernels`). Each
    worker receives `shared` once (tensors, settings, models), for its tasks to read with
    `shared_data()`; a task's own arguments travel with each task. Tensors travel in shared
    memory (torch.multiprocessing): a worker that changes one changes it for every process,
    so a worker trains copies of what it is sent."""
    context = multiprocessing.get_context("spawn")  # a fork of torch's threads can hang
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(shared,)
    ) as pool:
        yield pool
