"""What CPU-independent kernels would cost the pattern CNN: one training under two kernel sets.

    python -m benchmarks.pattern_kernels [--designs today "8x8 +all"] [--repeat 2]

For each design of `benchmarks.pattern_design` named, trains 2 networks for 2 epochs on every
labelled map, one at a time as the stage trains them (`train.fit`), one thread, in a fresh
process per kernel set, alternating: the portable kernels (ATen's baseline kernels, MKL's
reproducible mode, no oneDNN; what the stages ran before they were measured here and dropped:
docs/benchmarks.md) and the CPU's own (ATen's widest vector code, oneDNN, what the stages run).
Prints the CPU seconds per network of each (the fastest of `repeat` processes), their ratio,
and a digest of the weights, so that one can see whether two processes with one kernel set
trained the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
KERNELS = {"portable": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}, "native": {}}


def digest(networks: list[torch.nn.Module]) -> str:
    """The first 12 hex digits of the SHA-256 of the networks' saved weights."""
    buffer = io.BytesIO()
    torch.save([n.state_dict() for n in networks], buffer)
    return hashlib.sha256(buffer.getvalue()).hexdigest()[:12]


def measure(design: str) -> dict[str, object]:
    """In this process, with its kernels: CPU seconds per network of 2 networks x 2 epochs,
    one at a time, and the weights' digest."""
    from benchmarks.pattern_design import candidate_settings, conf_settings
    from pipeline.kovaleva.patterns.cnn import inputs_of
    from pipeline.kovaleva.patterns.train import fit, load_labelled_set

    if os.environ.get("ATEN_CPU_CAPABILITY") == "default":
        torch.backends.mkldnn.enabled = False  # the portable set's third part
    torch.set_num_threads(1)
    settings = replace(candidate_settings(conf_settings(), design), epochs=2, average_last=1)
    folders = [ROOT / "data" / "annotations" / f for f in ("minilm_l6", "mpnet_base")]
    labelled = load_labelled_set(folders)
    inputs = inputs_of(labelled.maps, settings.input_size, settings.input_channels)
    seeds = (42, 43)
    started = time.process_time()
    alone = [fit(inputs, labelled.labels, settings, seed) for seed in seeds]
    return {"alone_s": (time.process_time() - started) / len(seeds), "digest": digest(alone)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--designs", nargs="+", default=["today", "8x8 +all"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    for design in args.designs:
        runs: dict[str, list[dict[str, object]]] = {name: [] for name in KERNELS}
        for _ in range(args.repeat):
            for name, env in KERNELS.items():
                clean = {k: v for k, v in os.environ.items() if k not in KERNELS["portable"]}
                out = subprocess.run(
                    [sys.executable, "-m", "benchmarks.pattern_kernels", "--child", design],
                    env={**clean, **env},
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"{design}: CPU s per network (2 epochs, {args.repeat} processes each, fastest)")
        best = {}
        for name, results in runs.items():
            best[name] = min(float(r["alone_s"]) for r in results)
            digests = sorted({str(r["digest"]) for r in results})
            print(f"  {name:8s} {best[name]:.3f}  weights {digests}")
        print(f"  portable / native: {best['portable'] / best['native']:.2f}")


if __name__ == "__main__":
    main()
