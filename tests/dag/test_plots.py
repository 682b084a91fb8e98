"""dvc.yaml's `plots:` declares real plots only: every entry is a PNG figure or a CSV table
of the committed outputs (never a folder, whose figures' caption sidecars DVC would draw as
empty plots), and a stage run once or per seed declares every figure it wrote."""

from __future__ import annotations

from pathlib import PurePosixPath

import yaml

from pipeline.core import layout
from pipeline.dag.declarations import STAGES
from pipeline.dag.stage_types import OUTPUTS, Per
from tests.support.paths import REPO


def declared_plots() -> list[str]:
    """The paths of dvc.yaml's `plots:`, `${seed}` read from params.yaml."""
    seed = yaml.safe_load((REPO / "params.yaml").read_text())["seed"]
    entries = yaml.safe_load((REPO / "dvc.yaml").read_text())["plots"]
    paths = [entry if isinstance(entry, str) else next(iter(entry)) for entry in entries]
    return [path.replace("${seed}", str(seed)) for path in paths]


def test_every_declared_plot_is_a_figure_or_a_table_file() -> None:
    plots = declared_plots()
    assert plots and len(plots) == len(set(plots))
    for path in plots:
        assert (REPO / path).is_file(), f"{path}: not a committed file"
        assert PurePosixPath(path).suffix in {".png", ".csv"}, path


def test_a_stage_run_once_or_per_seed_declares_exactly_the_figures_it_wrote() -> None:
    seed = yaml.safe_load((REPO / "params.yaml").read_text())["seed"]
    checked = 0
    for stage in STAGES:
        if "task" in stage.per.value or "figures" not in stage.results:
            continue
        where = [layout.seed_folder(seed)] if stage.per is Per.SEED else []
        folder = REPO / layout.results(OUTPUTS, "figures", stage.name, *where)
        written = {png.name for png in folder.glob("*.png")}
        assert set(stage.dvc_figures) == written, stage.name
        checked += len(written)
    assert checked >= 8
