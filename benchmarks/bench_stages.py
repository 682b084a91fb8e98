"""Every stage's wall time against the machine's matmul rate, measured in the same run.

    python -m benchmarks.bench_stages [--repro] [--timings DIR] [--baseline JSON] [--save JSON]

Each stage writes its wall seconds to `outputs/timings/<stage>[/<task>[/seed<N>]].json`
(`pipeline/core/stage.py`). This command sums them per stage, measures the float32 matmul
rate of this machine now (`bench_cost.matmul_gflops`), and prints each stage's seconds and
its cost in units the machine's speed cancels out of: seconds x GFLOP/s, the work the
stage's time would buy at the matmul peak (TFLOP at peak). Between two machines, or two
moments of one busy machine, that figure moves far less than the seconds do.

- `--repro` first runs `dvc repro --force` (the whole committed profile, tens of minutes),
  so the timings are this checkout's, and prints what the run spent outside the stages'
  timers: its wall time less the stages' seconds, per stage run (Python's start-up and
  imports, and DVC's hashing, locking and `dvc.lock` writes);
- `--save JSON` writes the table, `--baseline JSON` prints each stage's ratio to a saved
  table (now / baseline, so below 1 is faster), which is how a change is held to its gains.

No test times anything: this is the benchmark that guards the stages' speed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd

from benchmarks.bench_cost import matmul_gflops
from pipeline.core.io import write_text

ROOT = Path(__file__).resolve().parent.parent


def stage_seconds(timings: Path) -> dict[str, float]:
    """{stage: wall seconds summed over its tasks and seeds} from a timings folder."""
    totals: dict[str, float] = defaultdict(float)
    for path in sorted(timings.rglob("*.json")):
        record = json.loads(path.read_text())
        totals[record["stage"]] += float(record["seconds"])
    return dict(totals)


def stage_runs(timings: Path) -> int:
    """How many stage runs (stage, task, seed) wrote a timing under `timings`."""
    return sum(1 for _ in timings.rglob("*.json"))


def between_stages(wall: float, seconds: dict[str, float], runs: int) -> str:
    """What a `dvc repro` of `wall` seconds spent outside its `runs` stage runs' timers."""
    outside = wall - sum(seconds.values())
    return (
        f"dvc repro: {wall:,.1f} s wall, {outside:,.1f} s ({outside / wall:.0%}) outside the "
        f"stages' timers: {outside / runs:.1f} s per stage run ({runs} runs) of start-up, "
        "imports and DVC's bookkeeping"
    )


def cost_table(seconds: dict[str, float], gflops: float) -> pd.DataFrame:
    """One row per stage, slowest first: seconds, share of the total, TFLOP at peak."""
    table = pd.DataFrame({"stage": list(seconds), "seconds": list(seconds.values())})
    table["share"] = table["seconds"] / table["seconds"].sum()
    table["tflop_at_peak"] = table["seconds"] * gflops / 1e3
    return table.sort_values("seconds", ascending=False, ignore_index=True)


def against(table: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """Adds `ratio`: this run's TFLOP at peak over the baseline's, per stage in both."""
    base = baseline.set_index("stage")["tflop_at_peak"]
    ratio = table["tflop_at_peak"] / table["stage"].map(base)
    return table.assign(ratio=ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repro", action="store_true", help="run dvc repro --force first")
    parser.add_argument("--timings", type=Path, default=ROOT / "outputs" / "timings")
    parser.add_argument("--baseline", type=Path, help="a table written by --save")
    parser.add_argument("--save", type=Path, help="write this run's table (JSON)")
    args = parser.parse_args()
    wall = None
    if args.repro:
        started = time.perf_counter()
        subprocess.run(["dvc", "repro", "--force"], cwd=ROOT, check=True)
        wall = time.perf_counter() - started
    seconds = stage_seconds(args.timings)
    if not seconds:
        raise SystemExit(f"error: no stage timings under {args.timings}; run the pipeline first")
    gflops = matmul_gflops()
    table = cost_table(seconds, gflops)
    if args.baseline:
        table = against(table, pd.read_json(args.baseline))
    print(f"float32 matmul rate now: {gflops:.1f} GFLOP/s")
    print(table.to_string(index=False, float_format=lambda x: f"{x:,.2f}"))
    total = table["seconds"].sum()
    print(f"all stages: {total:,.1f} s = {total * gflops / 1e3:,.1f} TFLOP at peak")
    if wall is not None:
        print(between_stages(wall, seconds, stage_runs(args.timings)))
    if args.save:
        write_text(args.save, table.drop(columns="ratio", errors="ignore").to_json(indent=1))


if __name__ == "__main__":
    main()
