"""The same verdicts on every CPU: the default run's claims judged again on its outputs with
every computed number's last bits perturbed, as another CPU's rerun perturbs them.

A rerun on another CPU computes with other kernels, so its fine-tuned weights, attention maps
and every number downstream differ in their last bits. Here each non-integral number that the
claims read (the metrics files and the tables under plots/) is multiplied by 1 +/- 1e-7, a
seeded random sign per value, and the whole claims table is judged again: no verdict may move
between `supported` and `contradicted`. A verdict that moves to or from `inconclusive`, or any
other change, is printed (`pytest -s`), since a rule whose interval touches its threshold is
decided by the last bits alone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.claims.evaluate import all_claims, evaluate
from pipeline.claims.outputs import StageOutputs
from tests.support.paths import REPO

RELATIVE = 1e-7
OPPOSITE = {"supported": "contradicted", "contradicted": "supported"}


def _nudged(value: float, rng: np.random.Generator) -> float:
    return value * (1 + RELATIVE * rng.choice((-1.0, 1.0)))


def _perturb_json(data, rng: np.random.Generator):
    if isinstance(data, dict):
        return {key: _perturb_json(value, rng) for key, value in data.items()}
    if isinstance(data, list):
        return [_perturb_json(value, rng) for value in data]
    if isinstance(data, float) and np.isfinite(data) and not data.is_integer():
        return _nudged(data, rng)
    return data


def _perturb_csv(path: Path, rng: np.random.Generator) -> None:
    frame = pd.read_csv(path)
    for column in frame.select_dtypes("float").columns:
        values = frame[column].to_numpy()  # [rows]
        fractional = np.isfinite(values) & (values != np.round(values))
        signs = rng.choice((-1.0, 1.0), size=len(values))
        frame[column] = np.where(fractional, values * (1 + RELATIVE * signs), values)
    frame.to_csv(path, index=False)


def perturbed_copy(outputs: Path, into: Path, seed: int = 0) -> Path:
    """`outputs`' metrics and plots copied under `into`, every non-integral number nudged."""
    rng = np.random.default_rng(seed)
    for part in ("metrics", "plots"):
        shutil.copytree(outputs / part, into / part)
    for path in sorted((into / "metrics").rglob("*.json")):
        path.write_text(json.dumps(_perturb_json(json.loads(path.read_text()), rng)))
    for path in sorted((into / "plots").rglob("*.csv")):
        if "claims" not in path.parts:
            _perturb_csv(path, rng)
    return into


def judged(root: Path, tasks: list[str], seed: int) -> pd.Series:
    out = StageOutputs(root)
    table, _ = evaluate(all_claims(out, tasks), out, [seed])
    return table.set_index("claim")["verdict"]


def moved(before: pd.Series, after: pd.Series) -> dict[str, tuple[str, str]]:
    return {c: (before[c], after[c]) for c in before.index if before[c] != after[c]}


def test_a_nudge_that_flips_no_verdict_passes_and_a_flip_is_caught():
    before = pd.Series({"a": "supported", "b": "inconclusive"})
    assert moved(before, before) == {}
    flipped = pd.Series({"a": "contradicted", "b": "inconclusive"})
    assert OPPOSITE[before["a"]] == moved(before, flipped)["a"][1]


def test_perturbing_changes_the_numbers_but_not_integers(tmp_path):
    source = tmp_path / "source"
    (source / "metrics").mkdir(parents=True)
    (source / "plots" / "t").mkdir(parents=True)
    (source / "metrics" / "m.json").write_text(json.dumps({"x": 0.25, "n": 3, "f": 2.0}))
    pd.DataFrame({"i": [1, 2], "v": [0.5, 1.0]}).to_csv(source / "plots" / "t" / "a.csv")
    copy = perturbed_copy(source, tmp_path / "copy")
    metrics = json.loads((copy / "metrics" / "m.json").read_text())
    assert metrics["n"] == 3 and metrics["f"] == 2.0
    assert metrics["x"] != 0.25 and metrics["x"] == pytest.approx(0.25, rel=2 * RELATIVE)
    table = pd.read_csv(copy / "plots" / "t" / "a.csv")
    assert list(table["i"]) == [1, 2] and table["v"][1] == 1.0
    assert table["v"][0] != 0.5 and table["v"][0] == pytest.approx(0.5, rel=2 * RELATIVE)


def test_no_verdict_of_the_default_run_flips_under_last_bit_noise(tmp_path):
    outputs = REPO / "outputs"
    params = pd.read_json(outputs / "metrics" / "claims.json", typ="series")
    if "findings" not in params:
        pytest.skip("the default run's claims have not been judged in this checkout")
    tasks = str(params["findings"]).split()[-2].split(",")
    seed = int(str(params["findings"]).split()[-1].lstrip("s").split(",")[0])
    before = judged(outputs, tasks, seed)
    after = judged(perturbed_copy(outputs, tmp_path / "outputs"), tasks, seed)
    changes = moved(before, after)
    for claim, (was, now) in changes.items():
        print(f"{claim}: {was} -> {now}")
    flips = {c: v for c, v in changes.items() if OPPOSITE.get(v[0]) == v[1]}
    assert not flips, f"verdicts flipped by last-bit noise: {flips}"
