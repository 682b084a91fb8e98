"""Wall time of the whole DAG run in parallel against a sequential `dvc repro`, same commit.

    python -m benchmarks.bench_parallel [--jobs 2] [--experiment micro] [--repeat 1]
                                        [--workdir DIR] [--keep]

For each repeat it clones this checkout's HEAD twice, removes `dvc.lock` in both (so that
every stage runs), then times `dvc repro` in one clone and `python -m pipeline.scale --jobs N`
in the other, one after the other (the order alternates between repeats, so that a drift in
the machine's load falls on both alike). `--experiment NAME` composes `params.yaml` for that
profile first (`python -m tools.params experiment=NAME`); without it, the committed
profile runs. Offline data come from $DARK_SECRETS_DATA, as for any run.

It prints each run's wall seconds, the ratio parallel / sequential, how busy the slots were
(the parallel stages' spans summed over the wall time), the chain of stages that bounded the
parallel run (from the last stage to finish back through the dependency each one waited for
last) with how much of its length its stages ran rather than waited for a slot, and the
output files whose bytes differ between the two clones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# a line of the runner's progress display: "[  m:ss   n/N] what        stage  detail", what
# padded to 11 characters (pipeline/scale/__main__.py, Display)
PROGRESS = re.compile(r"^\[\s*(\d+):(\d\d)\s+\d+/\d+\] (.{11}) (\S+)")


@dataclass(frozen=True)
class Span:
    """When a stage of the parallel run started and ended, in seconds since the run began."""

    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


def environment(clone: Path) -> dict[str, str]:
    """The current environment, with this interpreter's scripts (dvc) first on PATH and the
    clone's packages importable ahead of an editable install of this checkout."""
    env = {**os.environ, "PYTHONPATH": str(clone)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def prepare_clone(clone: Path, experiment: str | None) -> None:
    """A clone of HEAD with `dvc.lock` removed, composed for `experiment` if one is given."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    (clone / "dvc.lock").unlink(missing_ok=True)
    if experiment:
        command = [sys.executable, "-m", "tools.params", f"experiment={experiment}"]
        subprocess.run(command, cwd=clone, env=environment(clone), check=True)


def timed(command: list[str], clone: Path, log: Path) -> float:
    """Wall seconds of `command` run in `clone`, its output written to `log`."""
    start = time.perf_counter()
    with log.open("w") as out:
        result = subprocess.run(
            command, cwd=clone, env=environment(clone), stdout=out, stderr=subprocess.STDOUT
        )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench_parallel: `{' '.join(command)}` failed in {clone}; see {log}")
    return seconds


def spans(log_text: str) -> dict[str, Span]:
    """Each stage's span from the runner's progress lines ("started", then "ran")."""
    started: dict[str, float] = {}
    found: dict[str, Span] = {}
    for line in log_text.splitlines():
        match = PROGRESS.match(line)
        if not match:
            continue
        minutes, seconds, what, stage = match.groups()
        at, what = 60 * int(minutes) + int(seconds), what.strip()
        if what == "started":
            started[stage] = at
        elif what == "ran" and stage in started:
            found[stage] = Span(started[stage], at)
    return found


def bounding_chain(ran: dict[str, Span], upstream: dict[str, list[str]]) -> list[str]:
    """From the stage that ended last, back through the upstream stage that ended last
    before it: the chain that spans the wall time, its stages' lengths plus the gaps where a
    stage whose dependencies had ended waited for a slot."""
    chain = [max(ran, key=lambda s: ran[s].end)]
    while waited := [s for s in upstream.get(chain[-1], []) if s in ran]:
        chain.append(max(waited, key=lambda s: ran[s].end))
    return chain[::-1]


def upstream_of(clone: Path) -> dict[str, list[str]]:
    """Each stage's direct dependencies, from DVC's graph of the clone (as the runner plans;
    in a process of its own, since DVC resolves dvc.yaml from the working directory)."""
    code = (
        "import json; from dvc.repo import Repo; from pipeline.scale.plan import plan; "
        "p = plan(Repo('.')); "
        "print(json.dumps({s.addressing: [u.addressing for u in p.upstream[s]] for s in p.order}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=clone, env=environment(clone),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(result.stdout)


def differing_outputs(first: Path, second: Path) -> list[str]:
    """Files under outputs/ whose bytes differ between the clones, or that only one has
    (outputs/timings/ left out: the stages' own wall times, never the same twice)."""

    def digests(root: Path) -> dict[str, str]:
        folder = root / "outputs"
        return {
            str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*")
            if p.is_file() and p.relative_to(folder).parts[0] != "timings"
        }

    a, b = digests(first), digests(second)
    return sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))


def one_repeat(workdir: Path, jobs: int, experiment: str | None, parallel_first: bool) -> None:
    sequential, parallel = workdir / "sequential", workdir / "parallel"
    for clone in (sequential, parallel):
        prepare_clone(clone, experiment)
    runs = {
        "sequential": (["dvc", "repro"], sequential),
        "parallel": ([sys.executable, "-m", "pipeline.scale", "--jobs", str(jobs)], parallel),
    }
    order = ["parallel", "sequential"] if parallel_first else ["sequential", "parallel"]
    seconds = {}
    for name in order:
        command, clone = runs[name]
        print(f"{name}: {' '.join(command)} ...", flush=True)
        seconds[name] = timed(command, clone, workdir / f"{name}.log")
        print(f"{name}: {seconds[name]:,.0f} s", flush=True)
    print(f"ratio parallel / sequential: {seconds['parallel'] / seconds['sequential']:.2f}")

    ran = spans((workdir / "parallel.log").read_text())
    busy = sum(s.seconds for s in ran.values())
    print(
        f"slots: the {len(ran)} stages' spans add up to {busy:,.0f} s, "
        f"{busy / seconds['parallel']:.2f} x the wall time with {jobs} slots"
    )
    chain = bounding_chain(ran, upstream_of(parallel))
    steps = " -> ".join(f"{s} ({ran[s].seconds:.0f} s)" for s in chain)
    running = sum(ran[s].seconds for s in chain)
    print(
        f"bounding chain: {steps}; its stages ran {running:,.0f} s of the "
        f"{ran[chain[-1]].end:,.0f} s to its end, the rest waiting for a free slot "
        "(or for DVC to record the stage before)"
    )

    differ = differing_outputs(sequential, parallel)
    print(f"output files that differ: {len(differ)}" + "".join(f"\n  {name}" for name in differ))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="slots of the parallel run")
    parser.add_argument("--experiment", help="a profile of conf/experiment (default: committed)")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of runs, alternating order")
    parser.add_argument("--workdir", type=Path, help="where the clones go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the clones and their logs")
    args = parser.parse_args()
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(f"commit {head}, profile {args.experiment or 'as committed'}, {os.cpu_count()} CPUs")
    base = args.workdir or Path(tempfile.mkdtemp(prefix="bench_parallel_"))
    try:
        for repeat in range(args.repeat):
            workdir = base / f"repeat{repeat + 1}"
            if workdir.exists():
                sys.exit(f"bench_parallel: {workdir} exists; give an empty --workdir")
            workdir.mkdir(parents=True)
            print(f"--- repeat {repeat + 1} of {args.repeat} in {workdir}", flush=True)
            one_repeat(workdir, args.jobs, args.experiment, parallel_first=repeat % 2 == 1)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
