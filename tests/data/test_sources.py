"""The offline data sets are DVC dependencies (pipeline/data/sources.py, stages/data_sources.py).

Each reader depends on a digest of the data files it reads, written by the always-run
data_sources stage from wherever `DARK_SECRETS_DATA` points: editing a GLUE file makes
`dvc status` list prepare, another copy of the same data reruns nothing, and a missing data
set fails in one line before DVC removes prepare's outputs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from pipeline.core.errors import PipelineError
from pipeline.core.config_schema import Config
from pipeline.data import sources
from pipeline.data.sources import every_source
from tests.support.builders import composed
from tests.support.repos import micro_git_repo, run_ok, stale_stages

MICRO_TASKS = ("MRPC", "RTE")  # the glue_data folders of the micro profile's tasks


def data_copy(shared_data: Path, root: Path) -> Path:
    """A copy of the offline data with the micro tasks' GLUE files copied (to be edited) and
    the other data sets linked."""
    root.mkdir(parents=True)
    for task in MICRO_TASKS:
        shutil.copytree(shared_data / "glue_data" / task, root / "glue_data" / task)
    for name in ("ud_english_ewt", "gap_coreference", "framenet-1.5.tgz"):
        (root / name).symlink_to(shared_data / name)
    return root


def digests(monkeypatch, data: Path) -> dict[str, dict]:
    monkeypatch.setenv("DARK_SECRETS_DATA", str(data))
    found = every_source(*micro_settings())
    return {name: source.digest() for name, source in found.items()}


def micro_settings() -> tuple:
    """The settings every_source takes, as the micro profile composes them."""
    cfg = composed("experiment=micro")
    group = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(Config), cfg))
    return (
        group.paths.shared_data,
        group.paths.glue_dir,
        group.prepare,
        list(cfg.tasks),
        group.clark_syntax,
        group.clark_coref,
        group.framenet,
    )


def test_a_digest_names_files_not_folders_and_follows_their_bytes(
    shared_data, tmp_path, monkeypatch
) -> None:
    copy = data_copy(shared_data, tmp_path / "copy")
    original = digests(monkeypatch, shared_data)
    assert digests(monkeypatch, copy) == original  # two copies of the same data digest alike
    assert sorted(original["glue"]["files"]) == [
        "MRPC/dev.tsv",
        "MRPC/train.tsv",
        "RTE/dev.tsv",
        "RTE/train.tsv",
    ]
    train = copy / "glue_data" / "RTE" / "train.tsv"
    train.write_bytes(train.read_bytes().replace(b"entailment", b"entailment ", 1))
    edited = digests(monkeypatch, copy)
    assert edited["glue"] != original["glue"]
    assert {k: v for k, v in edited.items() if k != "glue"} == {
        k: v for k, v in original.items() if k != "glue"
    }


def test_a_missing_data_set_names_where_its_folder_came_from(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DARK_SECRETS_DATA", str(tmp_path))
    shared, glue_dir, prepare, tasks, _, coref, _ = micro_settings()
    with pytest.raises(PipelineError) as raised:
        sources.glue(shared, glue_dir, prepare, tasks).check()
    message = str(raised.value)
    assert "\n" not in message
    assert f"glue_data in DARK_SECRETS_DATA={tmp_path}" in message
    assert "GLUE_DIR" not in message  # the folder came from DARK_SECRETS_DATA, not GLUE_DIR
    monkeypatch.setenv("DARK_SECRETS_DATA", " ")
    with pytest.raises(PipelineError, match="DARK_SECRETS_DATA is set but empty"):
        sources.gap(shared, coref)


def dvc(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["dvc", *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow  # 15-50 s end to end: run with `pytest -m slow` (CI, time allowing)
def test_editing_a_glue_file_makes_dvc_status_list_prepare(shared_data, tmp_path) -> None:
    data = data_copy(shared_data, tmp_path / "data")
    root = tmp_path / "repo"
    env = micro_git_repo(root, data)
    run_ok(["dvc", "repro", "-q", "prepare"], root, env)
    assert "prepare" not in stale_stages(root, env)

    # another copy of the same data: the digests stay, prepare stays up to date
    other = data_copy(shared_data, tmp_path / "other")
    moved = {**env, "DARK_SECRETS_DATA": str(other)}
    run_ok(["dvc", "repro", "-q", "data_sources"], root, moved)
    assert "prepare" not in stale_stages(root, moved)

    train = data / "glue_data" / "RTE" / "train.tsv"
    train.write_bytes(train.read_bytes().replace(b"entailment", b"entailment ", 1))
    run_ok(["dvc", "repro", "-q", "data_sources"], root, env)
    assert "prepare" in stale_stages(root, env)


def test_missing_data_fails_before_prepare_loses_its_outputs(shared_data, tmp_path) -> None:
    root = tmp_path / "repo"
    env = micro_git_repo(root, data_copy(shared_data, tmp_path / "data"))
    run_ok(["dvc", "repro", "-q", "prepare"], root, env)
    prepared = sorted(p.name for p in (root / "data" / "glue").rglob("*.parquet"))
    (tmp_path / "empty").mkdir()
    failed = dvc(
        root, {**env, "DARK_SECRETS_DATA": str(tmp_path / "empty")}, "repro", "-f", "prepare"
    )
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error: ")]
    assert errors and f"DARK_SECRETS_DATA={tmp_path / 'empty'})" in errors[0], failed.stderr
    assert sorted(p.name for p in (root / "data" / "glue").rglob("*.parquet")) == prepared
    assert os.path.isdir(root / "data" / "glue")
