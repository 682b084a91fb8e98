"""How much does another CPU move the pattern CNN's numbers? A check by kernel emulation.

    python -m benchmarks.repeat_patterns [--kernels native,aten-default,...] [overrides]

PyTorch, oneDNN and MKL pick their vector kernels (SSE, AVX2, AVX-512) from the CPU at run
time, and kernels of different widths add floats in different orders; the pattern CNN's
stages compute with the CPU's own kernels, so another CPU may train other weights. This
script measures by how much on one machine: it emulates other CPUs through the libraries' own
switches (each limits the kernels to an older instruction set), runs the `patterns_train`
stage once per setting as a Hydra job in a temporary folder (the tracked outputs are not
touched), and prints each setting's cross-validated scores beside the native run's, with the
share of labelled maps whose out-of-fold class changed.

`overrides` go to every run (e.g. `patterns.classifier.cv_ensemble=2` for a faster check).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

# Environment of each emulated CPU. Each variable limits one library's run-time dispatch.
KERNELS: dict[str, dict[str, str]] = {
    "native": {},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},  # PyTorch's own kernels, no AVX
    "onednn-sse41": {"ONEDNN_MAX_CPU_ISA": "SSE41"},  # oneDNN convolutions at SSE4.1
    "mkl-sse42": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},  # MKL's matrix products at SSE4.2
}
SCORES = ("cnn.accuracy", "cnn.kappa", "cnn.macro_f1")


def run_stage(
    folder: Path,
    kernel_env: dict[str, str],
    overrides: list[str],
    stage: str = "patterns_train",
    root: Path = ROOT,
) -> float:
    """Run `stage` of the checkout at `root` as a Hydra job writing under `folder`; its wall
    seconds."""
    env = {**os.environ, **kernel_env, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", f"stages.{stage}", f"hydra.run.dir={folder}"]
    started = time.perf_counter()
    subprocess.run([*command, *overrides], cwd=root, env=env, check=True)
    return time.perf_counter() - started


def outcome(folder: Path) -> tuple[dict[str, float], pd.Series]:
    """A run's scores (SCORES and every class F1) and its out-of-fold CNN label per map."""
    metrics = json.loads((folder / "metrics" / "patterns_train.json").read_text())
    wanted = {
        k: v
        for k, v in metrics.items()
        if k in SCORES or (k.startswith("cnn.f1_") and not k.endswith(("_low", "_high")))
    }
    folds = pd.read_csv(folder / "plots" / "patterns_train" / "cross_validation.csv")
    return wanted, folds.set_index("map_id")["cnn"]


def compare(runs: dict[str, tuple[dict[str, float], pd.Series]]) -> pd.DataFrame:
    """One row per kernel setting: its scores, their largest gap to native, changed labels."""
    native_scores, native_labels = runs["native"]
    rows = []
    for name, (scores, labels) in runs.items():
        gaps = [abs(scores[k] - native_scores[k]) for k in native_scores]
        changed = (labels.reindex(native_labels.index) != native_labels).mean()
        rows.append({"kernels": name, **scores, "max_gap": max(gaps), "labels_changed": changed})
    return pd.DataFrame(rows).set_index("kernels")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated settings")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for every run")
    args = parser.parse_args()
    names = args.kernels.split(",")
    unknown = [n for n in names if n not in KERNELS]
    if unknown or "native" not in names:
        parser.error(f"--kernels must include native and name only {', '.join(KERNELS)}")
    runs = {}
    with tempfile.TemporaryDirectory(prefix="repeat_patterns_") as tmp:
        for name in names:
            seconds = run_stage(Path(tmp) / name, KERNELS[name], args.overrides)
            print(f"{name}: {seconds:.0f} s", flush=True)
            runs[name] = outcome(Path(tmp) / name)
    table = compare(runs)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(4).to_string())


if __name__ == "__main__":
    main()
