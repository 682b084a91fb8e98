"""The pattern-CNN benchmark: it times the stage's training of both designs, workers included,
and reports each model's recall from the stage's own tables."""

from __future__ import annotations

from dataclasses import replace

from benchmarks.bench_patterns import OLD, conf_settings, quality_lines, timed_training
from tests.support.paths import REPO

TINY = {
    "channels": [4, 4],
    "folds": 2,
    "cv_ensemble": 1,
    "ensemble": 1,
    "epochs": 1,
    "average_last": 0,
    "bootstrap_resamples": 10,
    "workers": 1,
}


def test_the_old_design_is_the_one_the_study_started_from() -> None:
    old = replace(conf_settings(), **OLD)
    assert (old.input_size, old.channels, old.epochs) == (16, [8, 8, 16, 16, 32, 32, 64, 64], 30)
    assert list(old.input_channels) == ["weights", "contrast", "roles"]


def test_a_timed_training_counts_its_workers_and_reports_every_labelled_map() -> None:
    folder = REPO / "data" / "annotations" / "minilm_l6"
    timed = timed_training([folder], replace(conf_settings(), **TINY))
    assert timed.wall_s > 0 and timed.cpu_s > 0
    assert timed.worker_peak_mib > 0  # the spawned worker was waited for and counted
    (line,) = quality_lines(timed.trained)
    recalled = line.split("recalled ")[1].split(", ")
    labelled = sum(int(part.split("/")[1]) for part in recalled)
    assert labelled == len(timed.trained.labelled.labels)
    assert line.startswith("  minilm_l6: accuracy ")
