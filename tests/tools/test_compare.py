"""`python -m tools.compare`: the verdicts that changed come first, every line fits 100
columns, and `--plot` gives `dvc plots diff` the axes a stage declares, which are columns of
the tables it writes."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from pipeline.core.errors import PipelineError
from pipeline.dag.declarations import STAGES
from tests.support.paths import REPO
from tools import compare

CLAIM = "kovaleva.types_recur.a_task_with_a_rather_long_name_to_cut"
DIFF = {
    compare.CLAIMS: {
        f"{CLAIM}.verdict": {"old": "contradicted", "new": "inconclusive"},
        f"{CLAIM}.statistic": {"old": -2.52889, "new": 0.0601551, "diff": 2.58},
        f"{CLAIM}.ci_low": {"old": -3.1, "new": -0.0404, "diff": 3.06},
        f"{CLAIM}.ci_high": {"old": 0.0, "new": 0.160311, "diff": 0.16},
        "clark.coref.verdict": {"old": None, "new": "supported"},
        "verdicts.paper.contradicted": {"old": 2, "new": 1, "diff": -1},
        "verdicts.paper.inconclusive": {"old": 4, "new": 5, "diff": 1},
    },
    "outputs/metrics/ablate/sst2/seed42.json": {
        "layers.1.delta": {"old": 0.02, "new": 0.03, "diff": 0.01},
        "layers.2.delta": {"old": 0.5, "new": 0.51, "diff": 0.01},
    },
}


def test_the_changed_verdicts_lead_and_every_line_fits_a_terminal() -> None:
    lines = compare.report(DIFF, ["main", "my-exp"], shown=5).splitlines()
    assert lines[:2] == ["main -> my-exp", "Verdicts changed: 2"]
    assert lines[2].startswith("  clark.coref ") and "absent -> supported" in lines[2]
    assert "contradicted -> inconclusive" in lines[3]
    assert lines[3].endswith("-2.53 -> 0.0602 [-0.0404, 0.16]")
    assert lines[3].startswith("  kovaleva.types_re…r_long_name_to_cut contradicted")
    assert "contradicted 2 -> 1, inconclusive 4 -> 5" in lines[4]
    assert lines[5] == "2 other metrics changed: ablate 2"
    assert "layers.1.delta" in lines[6]  # +50%, before +2%
    assert all(len(line) <= compare.WIDTH for line in lines)


def test_declared_axes_are_columns_of_the_committed_tables() -> None:
    checked = 0
    for stage in STAGES:
        for plot in stage.dvc_plots:
            tables = sorted((REPO / "outputs" / "plots" / stage.name).rglob(plot.table))
            assert tables, f"{stage.name} writes no {plot.table}"
            with tables[0].open() as handle:
                header = next(csv.reader(handle))
            assert {plot.x, plot.y} <= set(header), f"{tables[0]}: {header}"
            checked += 1
    assert checked >= 10


def test_plot_gives_dvc_the_declared_axes_or_names_the_ones_it_has() -> None:
    table = "outputs/plots/ablate/sst2/seed42/layers.csv"
    command = compare.plot_command(table, ["HEAD~1"])
    assert command[:4] == ["dvc", "plots", "diff", "HEAD~1"]
    assert command[4:] == ["--targets", table, "--template", "linear", "-x", "layer", "-y", "delta"]
    with pytest.raises(PipelineError, match=r"declares no axes for heads.csv .*layers.csv"):
        compare.plot_command("outputs/plots/ablate/sst2/seed42/heads.csv", [])


def test_compare_reads_dvc_metrics_diff_of_a_repository(tmp_path) -> None:
    def run(*args: str) -> str:
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, check=True)
        return done.stdout

    run("git", "init", "-q")
    run("git", "config", "user.email", "ci@example.com")
    run("git", "config", "user.name", "ci")
    run(sys.executable, "-m", "dvc", "init", "-q")
    (tmp_path / "dvc.yaml").write_text(f"metrics:\n  - {compare.CLAIMS}\n")
    metrics = tmp_path / compare.CLAIMS
    metrics.parent.mkdir(parents=True)
    metrics.write_text(json.dumps({"a.verdict": "supported", "a.statistic": 0.2}))
    run("git", "add", "-A")
    run("git", "commit", "-qm", "first")
    metrics.write_text(json.dumps({"a.verdict": "inconclusive", "a.statistic": 0.1}))
    printed = subprocess.run(
        [sys.executable, "-m", "tools.compare"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[:2] == ["HEAD -> the workspace", "Verdicts changed: 1"]
    assert lines[2].split() == ["a", "supported", "->", "inconclusive", "0.2", "->", "0.1"]
