"""The records of one `benchmarks/gpu_check.sh` run, and whether they meet the GPU targets.

    python -m benchmarks.gpu_records OUT

Reads what the run left in OUT (`trainer_fast.json`: both sides fast, no deterministic
kernels, compiled; `trainer_baseline.json`: both sides with deterministic kernels, eager, as
the loop ran before; `paper_cost.json`: `bench_cost` on the paper profile under its own
settings), adds to each the machine it ran on (device, torch, transformers, load average,
date) and writes them as records under OUT/records/ in the form `benchmarks.records` reads
(copy them to benchmarks/records/ to keep them). Then prints the Trainer tables and each
target: the fast loop >= 1.0x the Trainer's examples/s on every workload, >= 2x the baseline
loop on every workload, and the paper profile projected at <= 1.5 h.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from benchmarks.records import load, trainer_table

RUNS = ("trainer_fast", "trainer_baseline", "paper_cost")
PAPER_HOURS = 1.5  # the paper profile's projection, at most
LOOP_OVER_TRAINER = 1.0  # the fast loop's examples/s over the Trainer's, at least
OVER_BASELINE = 2.0  # the fast loop's examples/s over the baseline loop's, at least


def machine() -> dict[str, Any]:
    """What the run ran on."""
    import torch
    import transformers

    cuda = torch.cuda.is_available()
    return {
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "cpu_cores": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "load_average": os.getloadavg(),
        "date": datetime.date.today().isoformat(),
    }


def targets(records: dict[str, dict[str, Any]]) -> list[tuple[str, float, bool]]:
    """Each target: what it is, the run's figure, and whether the figure meets it."""
    fast, baseline = records["trainer_fast"], records["trainer_baseline"]
    checks = []
    before = {(c["model"], c["workload"]): c for c in baseline["comparisons"]}
    for c in fast["comparisons"]:
        name = f"{c['model']}, {c['workload']}"
        ratio = c["loop_over_trainer"]
        checks.append((f"{name}: loop / Trainer", ratio, ratio >= LOOP_OVER_TRAINER))
        old = before[c["model"], c["workload"]]["loop"]["examples_per_s"]
        gain = c["loop"]["examples_per_s"] / old
        checks.append((f"{name}: loop / baseline loop", gain, gain >= OVER_BASELINE))
    hours = records["paper_cost"]["projection"]["total"]["hours"]
    checks.append(("paper profile projected (h)", hours, hours <= PAPER_HOURS))
    return checks


def write_records(out: Path) -> dict[str, dict[str, Any]]:
    """OUT's runs with the machine added, written to OUT/records/<run>.json."""
    folder = out / "records"
    folder.mkdir(exist_ok=True)
    records = {}
    for run in RUNS:
        record = load(run, out) | {"machine": machine()}
        (folder / f"{run}.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
        records[run] = record
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder gpu_check.sh wrote")
    out = parser.parse_args().out
    missing = [run for run in RUNS if not (out / f"{run}.json").exists()]
    if missing:
        sys.exit(f"{out}: no {', '.join(m + '.json' for m in missing)}; see the step logs there")
    records = write_records(out)
    for run in ("trainer_fast", "trainer_baseline"):
        print(f"\n{run}:\n{trainer_table(run, out / 'records')}")
    print()
    for what, figure, met in targets(records):
        print(f"{'met' if met else 'NOT met'}: {what} = {figure:.2f}")


if __name__ == "__main__":
    main()
