"""`python -m pipeline.claims.update <analysis>` runs, in order, every step that adds a finding
after its package is written, and stops at the first that fails with one line naming it and
the fix; followed as docs/adding-an-analysis.md says on a toy analysis, in a copy of the
checkout, it changes no file but the package, the ledger, the generated files and the
analysis's slice of the registry's fixture."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.claims.update import Step, main, steps, update
from pipeline.core.errors import PipelineError
from tests.support.paths import REPO
from tests.support.toy_analysis import scanned, write_toy, write_values

PY = ("python", "-m")
IN_ORDER = [
    (*PY, "pipeline.analyses.defaults_list"),
    (*PY, "tools.params"),
    (*PY, "pipeline.dag.dvc_yaml"),
    ("dvc", "repro", "-s", "clark_heads"),
    (*PY, "pipeline.claims.refresh_fixture", "outputs", "clark_heads"),
    (*PY, "pipeline.claims.draft_entry"),
    ("dvc", "repro", "-s", "claims"),
    (*PY, "pipeline.claims.prose"),
    (*PY, "pipeline.claims.reference", "outputs/reference/standard", "--model", "minilm_l6"),
    (*PY, "pipeline.claims.kept_run", "outputs/reference/mpnet_quick", "--model", "mpnet_base"),
]


def test_the_steps_run_in_the_guide_s_order():
    assert [step.command for step in steps("clark_heads")] == IN_ORDER


def test_the_dry_run_prints_the_steps_and_runs_none(capsys):
    main(["clark_heads", "--dry-run"])
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[1] for line in printed] == [" ".join(c) for c in IN_ORDER]
    assert printed[3] == "4. the clark_heads stage: dvc repro -s clark_heads"


def test_an_analysis_without_a_stage_runs_none_of_its_own(tmp_path):
    (write_toy(tmp_path) / "declaration.py").unlink()
    with scanned(tmp_path):
        commands = [step.command for step in steps("toy")]
    assert ("dvc", "repro", "-s", "toy") not in commands
    assert ("dvc", "repro", "-s", "claims") in commands


def test_the_first_failure_stops_the_command_in_one_line(tmp_path):
    ran: list[tuple[str, ...]] = []

    def run(step: Step, root: Path) -> int:
        ran.append(step.command)
        return 2 if "pipeline.claims.refresh_fixture" in step.command else 0

    with pytest.raises(PipelineError) as failed:
        update("clark_heads", tmp_path, run)
    assert ran == IN_ORDER[:5]  # nothing after the refresh ran
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith(
        "update clark_heads: step 5 (the fixture's clark_heads slice: `python -m "
        "pipeline.claims.refresh_fixture outputs clark_heads`) failed with status 2; run the "
        "stage that writes the file"
    )


def test_every_step_runs_in_the_checkout_given(tmp_path):
    where: set[Path] = set()
    update("clark_heads", tmp_path, lambda step, root: where.add(root) or 0)
    assert where == {tmp_path}


def test_an_unknown_analysis_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit):
        main(["clark_head", "--dry-run"])
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: update: no analysis 'clark_head' under pipeline/analyses; write its package "
        "first (docs/adding-an-analysis.md)"
    ]


# the guide, followed in a copy of the checkout: the copy leaves out what no step reads
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".dvc", ".venv", "*.egg-info", "__pycache__", ".ruff_cache", "models", "runs",
    "benchmarks", "tests", "outputs",
)  # fmt: skip
KEPT_OUTPUTS = ("metrics", "plots", "figures", "reference")


def _workspace(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout"
    shutil.copytree(REPO, copy, ignore=LEFT_OUT)
    for folder in KEPT_OUTPUTS:
        shutil.copytree(REPO / "outputs" / folder, copy / "outputs" / folder)
    return copy


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _toy_stage(root: Path) -> int:
    """What the toy's stage writes (its stand-in: the toy has no entry point): each task's
    metrics for every seed of the run, as its results type reads them."""
    params = yaml.safe_load((root / "params.yaml").read_text())
    for task in params["tasks"]:
        for seed in params["seeds"]:
            path = root / "outputs" / "metrics" / "toy" / task / f"seed{seed}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            scaled = {"scaled_labels": 6.0, "scaled_labels_ci_low": 5.0}
            path.write_text(json.dumps(scaled | {"scaled_labels_ci_high": 7.0}))
    return 0


def _run_without_dvc(step: Step, root: Path) -> int:
    """A step as `update` runs it, DVC's two replaced: the toy stage by `_toy_stage`, the
    claims stage by its entry point, run as `dvc repro` runs it."""
    if step.command == ("dvc", "repro", "-s", "toy"):
        return _toy_stage(root)
    if step.command == ("dvc", "repro", "-s", "claims"):
        command = ["python", "-m", "stages.claims", "--dvc"]
    else:
        command = list(step.command)
    command = [sys.executable if part == "python" else part for part in command]
    return subprocess.run(command, cwd=root, capture_output=True).returncode


# what following the guide may change: the package (and its group's values), the ledger, the
# generated files (the run's and the kept runs' outputs, the docs' blocks, the config and DAG,
# the registry's record) and the toy's slice of the fixture
ALLOWED_UNDER = (
    "pipeline/analyses/toy/", "conf/toy/", "pipeline/claims/registry_fixture/metrics/toy/",
    "outputs/",
)  # fmt: skip
ALLOWED = (
    "pipeline/claims/amendments.yaml", "pipeline/claims/registry_record.json", "README.md",
    "dvc.yaml", "stage_groups.yaml", "stage_inputs.yaml", "params.yaml", "conf/config.yaml",
)  # fmt: skip


def _allowed(file: str) -> bool:
    docs = file.startswith("docs/") and file.endswith(".md")
    return file.startswith(ALLOWED_UNDER) or file in ALLOWED or docs


@pytest.mark.slow
def test_following_the_guide_changes_only_what_it_names(tmp_path):
    copy = _workspace(tmp_path)
    before = _hashes(copy)
    write_toy(copy / "pipeline" / "analyses")  # write the package
    write_values(copy)
    write_toy(tmp_path / "scanned")  # the same package, for this process to plan the steps
    with scanned(tmp_path / "scanned"):
        planned = steps("toy")
    update("toy", copy, _run_without_dvc, planned)  # run the command
    after = _hashes(copy)
    changed = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
    assert sorted(f for f in changed if not _allowed(f)) == []
    assert "pipeline/claims/amendments.yaml" in changed
    slice_ = {f for f in changed if f.startswith("pipeline/claims/registry_fixture/")}
    assert slice_ == {
        f"pipeline/claims/registry_fixture/metrics/toy/{t}/seed42.json" for t in ("mrpc", "sst2")
    }
    table = (copy / "outputs" / "plots" / "claims" / "claims.csv").read_text()
    assert "extension.toy_labels.sst2" in table
    recorded = subprocess.run(
        [sys.executable, "-m", "pipeline.claims.registry"], cwd=copy, capture_output=True
    )
    assert recorded.returncode == 0, recorded.stdout  # the draft records the digest
