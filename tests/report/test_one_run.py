"""The report shows one run: the results of its config's tasks and seeds, never a leftover of
another profile's run under the same outputs folder (pipeline/report/html.py, `Run`)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from pipeline.core.config import group_options
from pipeline.report.html import Run, render_report

TASKS = frozenset(group_options("task"))


def figure(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    fig.savefig(path)
    plt.close(fig)
    path.with_suffix(".json").write_text(json.dumps({"caption": path.as_posix()}))


def write_two_runs(root: Path) -> None:
    """The default profile's results (sst2, stsb, mrpc; seed 42), then a micro run's (mrpc,
    rte; seeds 42 and 43) over them, as `dvc exp run -S experiment=micro` leaves them."""
    for task, seed in [("sst2", 42), ("stsb", 42), ("mrpc", 42), ("rte", 42), ("rte", 43)]:
        figure(root / "figures" / "analyze" / task / f"seed{seed}" / "fig5_cosine.png")
        table = root / "plots" / "analyze" / task / f"seed{seed}" / "cosine.csv"
        table.parent.mkdir(parents=True, exist_ok=True)
        table.write_text("layer,cosine\n1,0.5\n")
        metrics = root / "metrics" / "analyze" / task / f"seed{seed}.json"
        metrics.parent.mkdir(parents=True, exist_ok=True)
        metrics.write_text(json.dumps({"cosine": seed}))
    figure(root / "figures" / "table1" / "seed7" / "table1.png")  # a seed no longer run
    figure(root / "figures" / "patterns_train" / "fig1_pattern_examples.png")  # run once


def test_the_report_after_a_profile_switch_holds_only_that_profile(tmp_path) -> None:
    write_two_runs(tmp_path)
    page = render_report(
        tmp_path, "micro", "", Run(frozenset({"mrpc", "rte"}), frozenset({42, 43}), TASKS)
    )
    shown = {
        "analyze/mrpc/seed42",
        "analyze/rte/seed42",
        "analyze/rte/seed43",
        "patterns_train/fig1_pattern_examples",
    }
    left_out = {"analyze/sst2/seed42", "analyze/stsb/seed42", "table1/seed7"}
    for where in shown:
        assert f"figures/{where}" in page, where
    for where in left_out:
        assert where not in page, where
    assert page.count("<img") == len(shown)
    assert "plots/analyze/sst2" not in page and "metrics/analyze/stsb" not in page
    assert "plots/analyze/rte/seed43/cosine.csv" in page


def test_without_a_run_the_report_shows_everything(tmp_path) -> None:
    write_two_runs(tmp_path)
    assert render_report(tmp_path, "all", "").count("<img") == 7
