"""Kept benchmark records (benchmarks/records/*.json, `bench_cost --json` output plus the
machine it ran on, and `bench_trainer --json` output) and the tables docs/benchmarks.md
shows from them.

    python -m benchmarks.records      # prints the GPU cost table and the Trainer comparisons

`tests/benchmarks/test_records.py` holds the page's table equal to the one printed here, so its
numbers come from the records, not from hand copies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

RECORDS = Path(__file__).resolve().parent / "records"
GPU_RUNS = ("paper_bf16", "paper_fp32", "full_bf16", "full_fp32")  # h200_<run>.json
TRAINER_RUNS = ("trainer_cpu_minilm",)  # bench_trainer --json records
ROWS = {  # projection row -> what the table calls it
    "finetune": "finetune (h)",
    "dump": "dump_attention (h)",
    "ablate": "ablate: head + layer sweep (h)",
    "importance": "ablate: importance + pruning curve (h)",
    "total": "total (h)",
}


def load(name: str, folder: Path = RECORDS) -> dict[str, Any]:
    return json.loads((folder / f"{name}.json").read_text())


def _peak_share(record: dict[str, Any], stage: str, rate: str) -> str:
    """`rate`'s GFLOP/s as a share of the matmul rate its process measured, with that rate."""
    peak = record["cost"][stage]["matmul_gflops"]
    return f"{record['gflops'][rate] / peak:.0%} of {peak / 1000:.0f}"


def gpu_cost_table(folder: Path = RECORDS) -> str:
    """The paper and full profiles projected on one GPU, bf16 and fp32, as a Markdown table."""
    records = {run: load(f"h200_{run}", folder) for run in GPU_RUNS}
    header = ["one H200"] + [run.replace("_", ", ") for run in GPU_RUNS]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in records.values()) + " |")

    for key, label in ROWS.items():
        row(label, lambda r, key=key: f"{r['projection'][key]['hours']:.2f}")
    row("attention store (GiB)", lambda r: f"{r['projection']['dump']['disk_gib']:.1f}")
    row("peak GPU memory, finetune (GiB)", lambda r: f"{r['cost']['finetune']['gpu_peak_gib']:.1f}")
    row(
        "fine-tuning: share of the matmul rate (TFLOP/s)",
        lambda r: _peak_share(r, "finetune", "finetune"),
    )
    row("sweep: share of the matmul rate (TFLOP/s)", lambda r: _peak_share(r, "ablate", "sweep"))
    return "\n".join(lines)


def trainer_table(run: str, folder: Path = RECORDS) -> str:
    """A `bench_trainer` record's table, as the benchmark printed it."""
    from benchmarks.bench_trainer import markdown

    return markdown(load(run, folder))


if __name__ == "__main__":
    print(gpu_cost_table())
    for run in TRAINER_RUNS:
        print(f"\n{run}:\n{trainer_table(run)}")
