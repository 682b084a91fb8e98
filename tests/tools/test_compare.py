"""`python -m tools.compare`: the verdicts that changed come first, every line fits 100
columns without cutting an id, two runs of other tasks or seeds are said to be such (their
claims of one run only are not changed verdicts), and `--plot` gives `dvc plots diff` the
axes a stage declares, which are columns of the tables it writes."""

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
        "findings": {"old": "quick 2S 2C 4I 0U 0N 0D sst2 s42", "new": "quick 2S 1C 5I ..."},
    },
    "outputs/metrics/ablate/sst2/seed42.json": {
        "layers.1.delta": {"old": 0.02, "new": 0.03, "diff": 0.01},
        "layers.2.delta": {"old": 0.5, "new": 0.51, "diff": 0.01},
    },
}


def test_the_changed_verdicts_lead_and_no_id_is_cut() -> None:
    lines = compare.report(DIFF, ["main", "my-exp"], shown=5).splitlines()
    assert lines[:2] == ["main -> my-exp", "Verdicts changed, of the claims both runs judged: 1"]
    assert lines[2] == f"  {CLAIM}"  # longer than its column: a line of its own, whole
    assert lines[3].strip() == "contradicted -> inconclusive  -2.53 -> 0.0602 [-0.0404, 0.16]"
    assert lines[3].index("contradicted") == 2 + 36 + 1  # in the verdicts' column
    assert lines[4] == "Claims judged only by my-exp: 1 (clark.coref)"
    assert "contradicted 2 -> 1, inconclusive 4 -> 5" in lines[5]
    assert lines[6] == "2 other metrics changed: ablate 2"
    assert "layers.1.delta" in lines[7]  # +50%, before +2%
    assert all(len(line) <= compare.WIDTH for line in lines)


def _claims(tasks: list[str], verdict: str) -> dict[str, str]:
    """A small claims table's verdicts, one claim per task and one of the whole run."""
    return {"clark.no_head_does_syntax_overall": verdict} | {
        f"kovaleva.table1_order.{task}": "supported" for task in tasks
    }


def _diff(old: dict[str, str], new: dict[str, str]) -> dict[str, dict[str, compare.Change]]:
    """`dvc metrics diff --json` of two claims tables' verdicts."""
    changed = {
        f"{claim}.verdict": {"old": old.get(claim), "new": new.get(claim)}
        for claim in sorted(old.keys() | new.keys())
        if old.get(claim) != new.get(claim)
    }
    return {compare.CLAIMS: changed}


def test_runs_of_other_tasks_are_said_to_be_so_not_listed_as_changed_verdicts() -> None:
    old, new = _claims(["sst2", "mrpc"], "supported"), _claims(["rte"], "inconclusive")
    params = {"params.yaml": {"tasks": {"old": ["sst2", "mrpc"], "new": ["rte"]}}}
    lines = compare.report(_diff(old, new), ["a", "b"], shown=10, params=params).splitlines()
    assert lines[1] == "The two runs cover different tasks: sst2, mrpc -> rte"
    assert lines[2] == "Verdicts changed, of the claims both runs judged: 1"
    assert lines[3].split()[:4] == ["clark.no_head_does_syntax_overall", "supported", "->",
                                    "inconclusive"]  # fmt: skip
    assert lines[4] == (
        "Claims judged only by a: 2 (kovaleva.table1_order.mrpc, kovaleva.table1_order.sst2)"
    )
    assert lines[5] == "Claims judged only by b: 1 (kovaleva.table1_order.rte)"
    assert "absent" not in "\n".join(lines)


def test_runs_of_other_seeds_are_said_to_be_so() -> None:
    params = {"params.yaml": {"seeds": {"old": "[42]", "new": "[42, 43, 44]"}}}  # DVC's repr
    same = _claims(["sst2"], "supported")
    lines = compare.report(_diff(same, same), ["a", "b"], shown=10, params=params).splitlines()
    assert lines[1] == "The two runs cover different fine-tuning seeds: 42 -> 42, 43, 44"
    assert lines[2] == "Verdicts changed, of the claims both runs judged: 0"


def test_many_claims_of_one_run_wrap_between_ids_and_are_cut_to_shown() -> None:
    tasks = [f"task_with_a_long_name_{i}" for i in range(12)]
    lines = compare.report(_diff(_claims(tasks, "supported"), {}), ["a", "b"], shown=8).splitlines()
    listing = " ".join(line.strip() for line in lines if "judged only" in line or
                       line.startswith("  kovaleva") or line.startswith("  clark"))  # fmt: skip
    assert listing.startswith("Claims judged only by a: 13 (clark.no_head_does_syntax_overall,")
    assert listing.endswith("kovaleva.table1_order.task_with_a_long_name_4, and 5 more)")  # sorted
    ids = listing.split("(", 1)[1].removesuffix(", and 5 more)").split(", ")
    assert len(ids) == 8 and all(i.startswith(("clark.", "kovaleva.")) for i in ids)
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


def test_plot_gives_dvc_one_figure_of_a_task_never_its_caption() -> None:
    figure = "outputs/figures/ablate/sst2/seed42/fig8_heads.png"
    assert compare.plot_command(figure, ["HEAD~1"]) == [
        "dvc", "plots", "diff", "HEAD~1", "--targets", figure
    ]  # fmt: skip
    with pytest.raises(PipelineError, match=r"fig8_heads.json is not a figure: give a .png"):
        compare.plot_command(figure.replace(".png", ".json"), [])


def test_compare_reads_dvc_metrics_diff_of_a_repository(tmp_path) -> None:
    def run(*args: str) -> str:
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, check=True)
        return done.stdout

    run("git", "init", "-q")
    run("git", "config", "user.email", "ci@example.com")
    run("git", "config", "user.name", "ci")
    run(sys.executable, "-m", "dvc", "init", "-q")
    (tmp_path / "dvc.yaml").write_text(
        f"params:\n  - params.yaml\nmetrics:\n  - {compare.CLAIMS}\n"
    )
    (tmp_path / "params.yaml").write_text("tasks: [sst2]\nseeds: [42]\n")
    metrics = tmp_path / compare.CLAIMS
    metrics.parent.mkdir(parents=True)
    metrics.write_text(
        json.dumps({"a.verdict": "supported", "a.statistic": 0.2, "b.sst2.verdict": "supported"})
    )
    run("git", "add", "-A")
    run("git", "commit", "-qm", "first")
    (tmp_path / "params.yaml").write_text("tasks: [rte]\nseeds: [42]\n")
    metrics.write_text(
        json.dumps({"a.verdict": "inconclusive", "a.statistic": 0.1, "b.rte.verdict": "supported"})
    )
    printed = subprocess.run(
        [sys.executable, "-m", "tools.compare"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[:3] == [
        "HEAD -> the workspace",
        "The two runs cover different tasks: sst2 -> rte",
        "Verdicts changed, of the claims both runs judged: 1",
    ]
    assert lines[3].split() == ["a", "supported", "->", "inconclusive", "0.2", "->", "0.1"]
    assert lines[4:6] == [
        "Claims judged only by HEAD: 1 (b.sst2)",
        "Claims judged only by the workspace: 1 (b.rte)",
    ]
