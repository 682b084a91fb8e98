"""A stage that stops says so in one line: a misspelt key names the nearest ones, an
unwritable folder names itself, Ctrl-C says where the next run resumes, and under DVC the
last line names the one command that restores the outputs DVC removed before the run
(pipeline/core/failure.py, pipeline/core/stage.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tqdm import tqdm

from pipeline.core import stage as stage_module
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.failure import restore_command
from pipeline.core.overrides import check_overrides
from pipeline.core.stage import stage_main
from tests.support.paths import REPO
from tests.support.repos import micro_git_repo, run_ok


@pytest.mark.parametrize(
    ("override", "hint"),
    [
        ("finetune.epoch=3", "did you mean `finetune.epochs`?"),
        ("finetune.baselines.random=false", "did you mean `finetune.baselines.random_init`?"),
        ("experimnt=micro", "did you mean `experiment` or `experiment_name`?"),
    ],
)
def test_a_misspelt_key_names_the_nearest(override: str, hint: str) -> None:
    with pytest.raises(PipelineError) as raised:
        check_overrides([override])
    assert str(raised.value) == f"unknown config key `{override.split('=')[0]}`; {hint}"


@pytest.mark.parametrize(
    "override",
    ["finetune.epochs=3", "prepare.min_rows.cola.train=10", "hydra.run.dir=x", "model=tiny_albert"],
)
def test_known_keys_and_free_mappings_pass(override: str) -> None:
    check_overrides([override])


def test_a_hydra_run_with_a_misspelt_key_prints_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stages.finetune", "finetune.epoch=3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: unknown config key `finetune.epoch`; did you mean `finetune.epochs`?"
    ]


def test_an_unwritable_folder_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exited, exit_on_error():
        raise PermissionError(13, "Permission denied", "outputs/models")
    assert exited.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: permission denied: outputs/models;")


def test_the_restore_command_covers_every_output_dvc_removed(tmp_path) -> None:
    # dvc.yaml alone, outside any repository: the plain advice, whatever this checkout's state
    dvc_yaml = tmp_path / "dvc.yaml"
    shutil.copy(REPO / "dvc.yaml", dvc_yaml)
    # the fine-tuned model is kept while the stage runs (persist): only its results go
    command = restore_command("finetune", "rte", 42, dvc_yaml)
    assert command == (
        "git checkout HEAD -- outputs/plots/finetune/rte/seed42 "
        "outputs/figures/finetune/rte/seed42 outputs/metrics/finetune/rte/seed42.json"
    )
    # the prepared data is written file by file, so DVC removes it and its cache restores it
    command = restore_command("prepare", None, None, dvc_yaml)
    assert command == "dvc checkout prepare && git checkout HEAD -- outputs/metrics/prepare.json"
    assert restore_command("nonexistent", None, None, dvc_yaml) is None


@pytest.fixture
def sigterm_handler():
    """SIGTERM's handler as it was before the test (stage_main sets its own)."""
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def interrupted(monkeypatch, tmp_path: Path, checkpoints: bool, stop: str = "ctrl-c") -> int:
    """Run stage_main under DVC (finetune@rte-42) with a run stopped by Ctrl-C, or by the
    SIGTERM a scheduler sends (`stop`); its exit status."""
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(REPO / name, tmp_path / name)
    if checkpoints:
        (tmp_path / "outputs" / "checkpoints" / "finetune" / "rte" / "seed42").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["finetune", "--dvc", "rte", "--seed", "42"])
    monkeypatch.setattr(stage_module, "_stage_name", lambda: "finetune")

    def run(stage) -> None:
        steps = iter(tqdm(range(10), desc="training"))  # open, as a bar is when Ctrl-C comes
        next(steps)
        if stop == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as exited:
        stage_main(run)
    return exited.value.code


@pytest.mark.parametrize(("stop", "status"), [("ctrl-c", 130), ("sigterm", 143)])
@pytest.mark.parametrize("checkpoints", [True, False])
def test_ctrl_c_or_sigterm_says_where_it_resumes_then_how_to_restore(
    monkeypatch, tmp_path, capsys, checkpoints, stop, status, sigterm_handler
) -> None:
    assert interrupted(monkeypatch, tmp_path, checkpoints, stop) == status
    lines = capsys.readouterr().err.replace("\r", "\n").splitlines()[-2:]  # after the bar
    resumes = "resumes from the checkpoints in outputs/checkpoints/finetune/rte/seed42"
    assert lines[0].startswith("interrupted; ") and (resumes in lines[0]) == checkpoints
    assert lines[1] == (
        "restore the outputs DVC removed before this run: "
        + restore_command("finetune", "rte", 42, REPO / "dvc.yaml")
    )


def test_a_run_after_a_killed_one_says_what_was_removed_and_how_to_restore_it(
    monkeypatch, tmp_path, capsys, sigterm_handler
) -> None:
    """kill -9 leaves the mark of the run under way; the next run names what DVC removed."""
    interrupted(monkeypatch, tmp_path, checkpoints=False)
    assert "was killed" not in capsys.readouterr().err  # an interrupted run ends its mark
    (tmp_path / "outputs" / "running" / "finetune@rte-42").touch()  # what kill -9 leaves
    stage_main(lambda stage: None)
    command = restore_command("finetune", "rte", 42, REPO / "dvc.yaml")
    removed = command.removeprefix("git checkout HEAD -- ")
    assert capsys.readouterr().err.splitlines()[0] == (
        f"the last run of finetune@rte-42 was killed before it ended, and DVC had removed "
        f"{removed}; this run makes them again (to restore them instead: {command})"
    )
    assert not (tmp_path / "outputs" / "running" / "finetune@rte-42").exists()


def test_a_failed_dvc_stage_ends_with_the_command_that_restores_its_outputs(
    shared_data, tmp_path
) -> None:
    root = tmp_path / "repo"
    env = micro_git_repo(root, shared_data)
    run_ok(["dvc", "repro", "-q", "prepare"], root, env)
    prepared = {
        p.relative_to(root): p.read_bytes() for p in (root / "data/glue").rglob("*.parquet")
    }
    run_ok(["git", "add", "-A"], root, env)
    run_ok(["git", "commit", "-qm", "prepared"], root, env)
    stage = root / "stages" / "prepare.py"
    stage.write_text(
        stage.read_text().replace("    glue.check()\n", "    glue.check()\n    1 / 0\n")
    )
    failed = subprocess.run(
        ["dvc", "repro", "prepare"], cwd=root, env=env, capture_output=True, text=True
    )
    assert failed.returncode != 0 and not (root / "data/glue").exists()  # DVC removed it
    ours = [line for line in failed.stderr.splitlines() if line.startswith("restore ")]
    assert ours, failed.stderr[-2000:]
    command = ours[-1].split(": ", 1)[1]
    assert command == "dvc checkout prepare && git checkout HEAD -- outputs/metrics/prepare.json"
    run_ok(["bash", "-c", command], root, env)
    restored = {
        p.relative_to(root): p.read_bytes() for p in (root / "data/glue").rglob("*.parquet")
    }
    assert restored == prepared


@pytest.mark.slow
def test_a_misspelt_label_keeps_the_classifier_and_restores_the_rest(shared_data, tmp_path):
    """The pattern classifier is kept while patterns_train runs (persist, written whole): a
    misspelt label fails in one line and leaves cnn.pt as it was; the last line restores the
    results DVC removed."""
    root = tmp_path / "repo"
    env = micro_git_repo(root, shared_data)
    run_ok(["dvc", "repro", "-q", "patterns_train"], root, env)
    run_ok(["git", "add", "-A"], root, env)
    run_ok(["git", "commit", "-qm", "trained"], root, env)
    classifier = root / "outputs/patterns/cnn.pt"
    trained = classifier.read_bytes()
    labels = root / "data/annotations/minilm_l6/visual.csv"
    lines = labels.read_text().splitlines(keepends=True)
    labels.write_text(
        "".join([lines[0], lines[1].replace(",vertical,", ",verticall,"), *lines[2:]])
    )

    failed = subprocess.run(
        ["dvc", "repro", "patterns_train"], cwd=root, env=env, capture_output=True, text=True
    )
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "visual.csv:2: unknown class 'verticall'" in errors[0]
    assert classifier.read_bytes() == trained
    restore = failed.stderr.strip().splitlines()
    restore = [line for line in restore if line.startswith("restore ")][-1].split(": ", 1)[1]
    assert restore.startswith("git checkout HEAD -- outputs/plots/patterns_train ")
    assert "dvc checkout" not in restore
    run_ok(["bash", "-c", restore], root, env)
    assert (root / "outputs/metrics/patterns_train.json").exists()
