"""Worker processes of one torch thread each, for many small independent computations.

The pattern CNNs are tiny: one network trains fastest on one thread, so `patterns_train`
trains several side by side, one per process, and `patterns_apply` predicts with its two
ensembles the same way. A network's numbers do not depend on how many workers run or which
one trains it: each computes on one thread with the CPU's own kernels, so one machine gives
the same bytes every time (tests/kovaleva/patterns/test_cnn.py). Another CPU or another build
of torch may round differently and train other weights (docs/benchmarks.md, "The pattern CNN
on other CPUs").
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import torch

# What `worker_pool` sent this worker process once, for every task it runs.
_shared: object = None


def _start_worker(shared: object) -> None:
    """Runs first in each worker: one thread, and the pool's shared data kept for
    `shared_data`."""
    global _shared
    torch.set_num_threads(1)
    _shared = shared


def shared_data() -> object:
    """In a worker of `worker_pool`: the `shared` object its pool was opened with."""
    if _shared is None:
        raise RuntimeError("shared_data() runs only in a worker of worker_pool")
    return _shared


@contextlib.contextmanager
def worker_pool(workers: int, shared: object) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` spawned processes with one torch thread each. Each worker receives
    `shared` once (tensors, settings, models), for its tasks to read with `shared_data()`; a
    task's own arguments travel with each task. Tensors travel in shared memory
    (torch.multiprocessing): a worker that changes one changes it for every process, so a
    worker trains copies of what it is sent."""
    context = multiprocessing.get_context("spawn")  # a fork of torch's threads can hang
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(shared,)
    ) as pool:
        yield pool
