"""Every claim's statistic, interval and verdict on the registry's fixture (a frozen copy of
a run's claims inputs) on older x86-64 CPUs, emulated on this one through numpy's and
OpenBLAS's own switches: numpy's dispatched loops limited to a level
(`NPY_DISABLE_CPU_FEATURES`) and OpenBLAS's kernels to a CPU generation
(`OPENBLAS_CORETYPE`). The corrected shares' last bits differ (their least-squares solves
run other OpenBLAS kernels: about 1e-12 relative), far below the six significant digits the
claims files keep and far from any threshold: every number agrees to 1e-9 and every verdict
is the same. The claims stage computes with numpy and scipy alone, so a verdict that moves
between two machines moves with its inputs (the fine-tuned models, the pattern
classifier), not with the claims' own arithmetic."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from numpy._core._multiarray_umath import __cpu_dispatch__

from tests.support.paths import REPO

MEASURE_FIXTURE = """
import json
from pipeline.claims.measurement_pins import FIXTURE, FIXTURE_SEED, FIXTURE_TASKS
from pipeline.claims.evaluate import all_claims
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import settle
out = StageOutputs(FIXTURE)
measured = {}
for claim in all_claims(out, FIXTURE_TASKS):
    m = claim.measure(out, FIXTURE_SEED)
    verdict, _ = settle(claim.rule(m), m)
    measured[claim.name] = [*(float(v).hex() for v in (m.statistic, m.ci_low, m.ci_high)), verdict]
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
from threadpoolctl import threadpool_info
levels = [f for f in __cpu_dispatch__ if __cpu_features__[f]]
blas = sorted({i["architecture"] for i in threadpool_info() if i["internal_api"] == "openblas"})
print(json.dumps({"numpy": levels, "openblas": blas, "measured": measured}))
"""

# name: (numpy's dispatched levels left on, OpenBLAS's kernels). Every level numpy dispatches
# to that is not kept is switched off, so a numpy that learns a newer level (AVX512_SPR, say)
# is still held to the emulated CPU's.
EMULATED_CPUS = {
    "x86-64-v3 (AVX2, no AVX-512)": (["X86_V3"], "Haswell"),
    "x86-64-v2 (SSE4.2)": ([], "Nehalem"),
}


def switches(levels: list[str], blas: str) -> dict[str, str]:
    """The environment that limits numpy's dispatch to `levels` and OpenBLAS to `blas`."""
    off = [level for level in __cpu_dispatch__ if level not in levels]
    return {"NPY_DISABLE_CPU_FEATURES": " ".join(off), "OPENBLAS_CORETYPE": blas}


def fixture_measurements(cpu: dict[str, str]) -> dict:
    """Every fixture claim's numbers as exact hex floats and its verdict, from a process
    limited by `cpu`, with the levels numpy and OpenBLAS ran at."""
    names = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")
    env = {k: v for k, v in os.environ.items() if k not in names}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE_FIXTURE],
        cwd=REPO,
        env=env | cpu,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_claims_measure_the_same_bits_on_emulated_older_cpus():
    here = fixture_measurements({})
    assert len(here["measured"]) > 40
    for name, (levels, blas) in EMULATED_CPUS.items():
        there = fixture_measurements(switches(levels, blas))
        assert there["numpy"] == levels and there["openblas"] == [blas], f"{name}: {there}"
        assert there["measured"].keys() == here["measured"].keys()
        for claim, (*numbers, verdict) in here["measured"].items():
            *theirs, their_verdict = there["measured"][claim]
            assert their_verdict == verdict, f"{name}: {claim}"
            expected = [float.fromhex(x) for x in numbers]
            got = [float.fromhex(x) for x in theirs]
            assert got == pytest.approx(expected, rel=1e-9, nan_ok=True), f"{name}: {claim}"
