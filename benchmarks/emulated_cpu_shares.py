"""Can another CPU flip a pattern-share verdict? MRPC's share claims under emulated CPUs.

    python -m benchmarks.emulated_cpu_shares [--kernels native,aten-default,...]

A fresh clone on another CPU fine-tunes again with other kernels (PyTorch, oneDNN and MKL pick
their vector kernels from the CPU at run time, and kernels of different widths add floats in
different orders), so its maps, the stratifier's calls of them and the shares estimated from
the share round differ in their last bits or more. For each kernel setting (`KERNELS`: native
and three older CPUs, emulated through the libraries' own switches) this script runs, as Hydra
jobs in one temporary folder per setting (the tracked outputs are not touched), MRPC's
fine-tuning, its attention dump and patterns_apply under the default profile, and judges the
MRPC share claims on each run's estimated shares with the claims' own measures and rules.
Every setting's jobs run one copy of HEAD's committed files (`snapshot`), so a working tree
edited during the run cannot make the settings differ in code rather than in kernels.

What it runs, and why no more: fine-tuning without its two Table 1 baselines (the
fine-tuned model is trained first and seeded on its own, so they do not change it; the
`weights` column says whether each setting's weights equal the DVC run's); the dump and
patterns_apply as the default profile runs them; no patterns_train: patterns_apply reads the
DVC run's classifier (outputs/patterns/cnn.pt, copied), and the estimated shares, which the
claims read, come from the frozen stratifier's calls and the round's labels by eye, not from
that classifier. The learned-task gate (the table1 stage's paired intervals over the
baselines skipped here) is not applied: the dev accuracy is shown instead.

Prints progress per stage and the table (kernel setting, wall seconds, fine-tuned dev
accuracy, the first three types' and the heterogeneous share with 95% intervals, the rarest
type in heads' worth of maps, each claim's verdict), and writes it, with every verdict that
moved from the native run's, to benchmarks/records/emulated_cpu_shares.md (rewritten after
each setting, so an interrupted run keeps those that finished).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.analyses.framenet.results import FramenetHeads
from pipeline.analyses.patterns_apply.claims import (
    estimated_share,
    first_three_types_large_part,
    heterogeneous_minority,
    types_recur,
)
from pipeline.analyses.patterns_apply.results import PatternsApplyMetrics
from pipeline.claims.claim import Claim
from pipeline.claims.evaluate import judge
from pipeline.claims.outputs import StageOutputs, SyntheticOutputs
from pipeline.claims.rules import Estimate
from pipeline.core import layout
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_text
from pipeline.models.zip_parts import sha256_of

ROOT = Path(__file__).resolve().parent.parent
# Environment of each emulated CPU. Each variable limits one library's run-time dispatch.
KERNELS: dict[str, dict[str, str]] = {
    "native": {},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},  # PyTorch's own kernels, no AVX
    "onednn-sse41": {"ONEDNN_MAX_CPU_ISA": "SSE41"},  # oneDNN convolutions at SSE4.1
    "mkl-sse42": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},  # MKL's matrix products at SSE4.2
}
TASK = "mrpc"
SEED = 42  # the default profile's fine-tuning seed
CLAIMS: tuple[Claim, ...] = (
    first_three_types_large_part(TASK),
    heterogeneous_minority(TASK),
    types_recur(TASK),
)
DECIDED = ("supported", "contradicted")  # a move between these two is a flip
# Each stage's job, in order, with the overrides that keep its cost to what the shares read.
STAGES: dict[str, list[str]] = {
    "finetune": [
        f"task={TASK}",
        "finetune.baselines.random_init=false",
        "finetune.baselines.pretrained_no_finetune=false",
    ],
    "dump_attention": [f"task={TASK}"],
    "patterns_apply": [f"task={TASK}"],
}
CLASSIFIER = Path("patterns") / "cnn.pt"  # patterns_apply's classifier, under an outputs folder
WEIGHTS = Path("model.safetensors")  # a fine-tuned model's weights, in its folder
RECORD = ROOT / "benchmarks" / "records" / "emulated_cpu_shares.md"
KERNEL = "kernels"  # the record's first column
COMMAND = "python -m benchmarks.emulated_cpu_shares"
# Every setting's jobs share the machine's cores with other work: OpenMP threads sleep
# rather than spin while they wait, which leaves the arithmetic as it is
# (docs/scale-out.md#threads-jobs-that-share-cores).
SHARED_CORES = {"OMP_WAIT_POLICY": "PASSIVE"}


@dataclass(frozen=True)
class Setting:
    """One kernel setting's run: what the table shows of it."""

    kernel: str
    seconds: float
    load: float  # the 1-minute load average, mean of its start and end (other jobs included)
    accuracy: float
    weights_as_dvc: bool
    out: StageOutputs  # its patterns_apply metrics and the model's heads


def interval_text(estimate: Estimate, digits: int = 3) -> str:
    """`0.612 [0.580, 0.641]`, or `undefined` with the reason."""
    if estimate.undefined:
        return f"undefined ({estimate.note})"
    low, high = estimate.ci_low, estimate.ci_high
    return f"{estimate.statistic:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def row(setting: Setting) -> dict[str, str]:
    """A setting's row: its cost, its fine-tuned model, the shares and each claim's verdict."""
    out = setting.out
    measured = {claim.name: claim.measure(out, SEED) for claim in CLAIMS}
    return {
        KERNEL: setting.kernel,
        "seconds": f"{setting.seconds:.0f}",
        "load": f"{setting.load:.1f}",
        "dev accuracy": f"{setting.accuracy:.4f}",
        "weights": "the DVC run's" if setting.weights_as_dvc else "differ",
        "first three": interval_text(estimated_share(out, TASK, SEED, "first_three")),
        "heterogeneous": interval_text(estimated_share(out, TASK, SEED, "heterogeneous")),
        "rarest type, heads": interval_text(measured[types_recur(TASK).name], 2),
    } | {claim.name: judge(claim, measured[claim.name]).verdict for claim in CLAIMS}


def table(settings: Sequence[Setting]) -> pd.DataFrame:
    """One row per setting (`row`), native first."""
    return pd.DataFrame([row(s) for s in settings]).astype(str)


def moves(found: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """(claim, kernel setting, native's verdict, its verdict) for every claim whose verdict
    under a setting differs from the native run's."""
    native = found.set_index(KERNEL).loc["native"]
    return [
        (claim.name, kernel, native[claim.name], verdict)
        for claim in CLAIMS
        for kernel, verdict in zip(found[KERNEL], found[claim.name], strict=True)
        if verdict != native[claim.name]
    ]


def flips(found: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """The moves between supported and contradicted (to or from another verdict is not one)."""
    return [m for m in moves(found) if {m[2], m[3]} == set(DECIDED)]


def markdown_table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(values) + " |" for values in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def read_table(text: str) -> pd.DataFrame:
    """The record's table (`markdown_table`), read back: the first block of `|` lines."""
    lines = [line for line in text.splitlines() if line.startswith(f"| {KERNEL} |")]
    if not lines:
        raise PipelineError(f"no table of kernel settings in the record; rerun {COMMAND}")
    start = text.splitlines().index(lines[0])
    rows = []
    for line in text.splitlines()[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return pd.DataFrame(rows[2:], columns=rows[0])


def record(found: pd.DataFrame, ran: Sequence[str], classifier_sha: str, commit: str) -> str:
    """The generated record: the conditions, the table and the verdicts that moved."""
    moved = moves(found)
    not_run = [k for k in KERNELS if k not in ran]
    lines = [
        "# The pattern shares' verdicts under emulated CPUs",
        "",
        f"Generated by `{COMMAND}` (docs/benchmarks.md#the-share-verdicts-under-emulated-cpus);"
        " do not edit by hand.",
        "",
        f"- task: {TASK}, fine-tuning seed {SEED}, the default profile; each setting fine-tunes, "
        "dumps the attention and runs patterns_apply as Hydra jobs in a temporary folder, "
        f"from one copy of commit {commit}'s files (its code and labels)",
        f"- CPU: {cpu_name() or 'unknown'}",
        f"- settings run: {', '.join(ran)}"
        + (f"; not run: {', '.join(not_run)}" if not_run else ""),
        f"- patterns_apply's classifier: outputs/{CLASSIFIER.as_posix()} (SHA-256 "
        f"{classifier_sha[:12]}); the shares are estimated from the frozen stratifier's "
        f"calls and the share round's labels by eye (data/annotations/)",
        "- seconds: wall time of the setting's three jobs, on a 2-core machine shared with "
        "other jobs (load: the 1-minute load average, mean of the setting's start and end); "
        "weights: whether the fine-tuned weights equal the DVC run's (outputs/models/); "
        "the learned-task gate is not applied",
        "",
        markdown_table(found),
        "Verdicts that moved from the native run's:" + ("" if moved else " none."),
        "",
    ]
    lines += [f"- {c} under {k}: {a} -> {b}" for c, k, a, b in moved]
    flipped = flips(found)
    lines += ["", f"Flips between supported and contradicted: {len(flipped)}.", ""]
    return "\n".join(lines)


def cpu_name() -> str:
    """The CPU's model name, as the kernel reports it ('' where it does not)."""
    info = Path("/proc/cpuinfo")
    names = [
        line.split(":", 1)[1].strip()
        for line in (info.read_text().splitlines() if info.exists() else [])
        if line.startswith("model name")
    ]
    return names[0] if names else ""


def snapshot(folder: Path) -> str:
    """The committed files of HEAD, extracted into `folder`, with the DVC run's prepared data
    of the task (which git does not hold): every setting's jobs run this one copy of the
    code and the labels, whatever the working tree does meanwhile. HEAD's short hash."""
    commit = git("rev-parse", "--short", "HEAD").decode().strip()
    with tarfile.open(fileobj=io.BytesIO(git("archive", "--format=tar", commit))) as tar:
        tar.extractall(folder, filter="data")
    prepared = Path("data") / "glue" / TASK
    if not (ROOT / prepared).is_dir():
        raise PipelineError(f"{ROOT / prepared} is missing; make it with `dvc repro prepare`")
    shutil.copytree(ROOT / prepared, folder / prepared)
    return commit


def git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True).stdout


def run_stage(
    folder: Path, kernel_env: dict[str, str], overrides: list[str], stage: str, root: Path
) -> float:
    """Run `stage` of the checkout at `root` as a Hydra job writing under `folder`; its wall
    seconds."""
    env = {**os.environ, **kernel_env, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", f"stages.{stage}", f"hydra.run.dir={folder}"]
    started = time.perf_counter()
    subprocess.run([*command, *overrides], cwd=root, env=env, check=True)
    return time.perf_counter() - started


def run_setting(kernel: str, folder: Path, classifier: Path, code: Path) -> Setting:
    """The three jobs of `kernel`'s setting, run from the checkout `code`, each writing under
    `folder` (its outputs folder too), with the classifier copied in; progress per stage."""
    folder.mkdir(parents=True)
    (folder / CLASSIFIER).parent.mkdir()
    shutil.copyfile(classifier, folder / CLASSIFIER)
    seconds, load = 0.0, os.getloadavg()[0]
    for stage, overrides in STAGES.items():
        print(f"{kernel}: {stage} ...", flush=True)
        env = KERNELS[kernel] | SHARED_CORES
        took = run_stage(folder, env, [*overrides, f"paths.outputs={folder}"], stage, code)
        print(f"{kernel}: {stage} took {took:.0f} s", flush=True)
        seconds += took
    metrics = json.loads(layout.metrics(folder, "finetune", TASK, f"seed{SEED}").read_text())
    dvc_weights = layout.model(ROOT / "outputs", TASK, SEED) / WEIGHTS
    weights = layout.model(folder, TASK, SEED) / WEIGHTS
    same = dvc_weights.exists() and sha256_of(weights) == sha256_of(dvc_weights)
    held = {
        (PatternsApplyMetrics, SEED): StageOutputs(folder).read(PatternsApplyMetrics, SEED),
        (FramenetHeads,): StageOutputs(ROOT / "outputs").read(FramenetHeads),
    }
    load = (load + os.getloadavg()[0]) / 2
    accuracy = metrics["finetuned.accuracy"]
    return Setting(kernel, seconds, load, accuracy, same, SyntheticOutputs(held))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated settings")
    args = parser.parse_args()
    names = args.kernels.split(",")
    if [n for n in names if n not in KERNELS] or names[:1] != ["native"]:
        parser.error(f"--kernels must start with native and name only {', '.join(KERNELS)}")
    classifier = ROOT / "outputs" / CLASSIFIER
    if not classifier.exists():
        parser.error(f"{classifier} is missing; make it with `dvc repro patterns_train`")
    settings: list[Setting] = []
    with tempfile.TemporaryDirectory(prefix="emulated_cpu_shares_") as tmp:
        copy = Path(tmp) / "cnn.pt"  # one classifier for every setting, whatever outputs/ does
        shutil.copyfile(classifier, copy)
        code = Path(tmp) / "code"
        commit = snapshot(code)
        print(f"the stages run from commit {commit}'s files", flush=True)
        for name in names:
            settings.append(run_setting(name, Path(tmp) / name, copy, code))
            found = table(settings)
            ran = [s.kernel for s in settings]
            write_text(RECORD, record(found, ran, sha256_of(copy), commit))
            print(f"{name}: recorded in {RECORD.relative_to(ROOT)}", flush=True)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(found.to_string(index=False))


if __name__ == "__main__":
    main()
