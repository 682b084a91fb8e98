"""Start-up time of every stage: how long `import stages.<name>` takes in a fresh process.

    python -m benchmarks.bench_startup [--repeat 5] [--before DIR] [--after DIR]

For each stage module under `stages/` of a checkout (default: this one), it runs
`python -c 'import stages.<name>'` `--repeat` times in a fresh interpreter, with the
checkout's root as working directory and on PYTHONPATH, and prints the median wall seconds
per stage and their sum. With `--before DIR` it measures that checkout too (e.g. a clone at
an older commit), alternating the two per repeat so that load on the machine falls on both
alike, and prints the ratio before / after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stage_names(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "stages").glob("*.py") if p.stem != "__init__")


def import_seconds(root: Path, stage: str) -> float:
    """Wall seconds of one fresh interpreter that imports `stages.<stage>` from `root`."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import stages.{stage}"], cwd=root, env=env, check=True)
    return time.perf_counter() - start


def measure(roots: dict[str, Path], stages: list[str], repeat: int) -> dict[str, dict[str, float]]:
    """Median import seconds per checkout and stage; the checkouts alternate per repeat."""
    times: dict[str, dict[str, list[float]]] = {k: {s: [] for s in stages} for k in roots}
    for _ in range(repeat):
        for stage in stages:
            for label, root in roots.items():
                times[label][stage].append(import_seconds(root, stage))
    return {k: {s: statistics.median(v) for s, v in t.items()} for k, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a checkout to compare with")
    parser.add_argument("--after", type=Path, default=ROOT)
    args = parser.parse_args()
    roots = {"after": args.after.resolve()}
    if args.before:  # the before column first
        roots = {"before": args.before.resolve(), **roots}
    stages = stage_names(args.after)
    if args.before:  # a stage present in only one checkout is left out of both sums
        stages = [s for s in stages if s in stage_names(args.before)]
    medians = measure(roots, stages, args.repeat)
    print(f"{'stage':<20}" + "".join(f"{label:>10}" for label in roots))
    for stage in stages:
        print(f"{stage:<20}" + "".join(f"{medians[k][stage]:>10.2f}" for k in roots))
    sums = {k: sum(m.values()) for k, m in medians.items()}
    print(f"{'sum':<20}" + "".join(f"{sums[k]:>10.2f}" for k in roots))
    if args.before:
        print(f"ratio before / after: {sums['before'] / sums['after']:.2f}")


if __name__ == "__main__":
    main()
