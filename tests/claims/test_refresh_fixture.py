"""The registry's fixture is refreshed from a run with one command, one analysis's slice at a
time: the slice then holds the files of that analysis's stage that the fixture's claims
read, every other file of the fixture keeps its bytes, and every claim measures on a whole
refresh what it measures on the run; a second refresh leaves no sibling behind (`.old`,
`.new`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.claims.evaluate import all_claims
from pipeline.claims.measurement_pins import FIXTURE, FIXTURE_TASKS, fixture_outputs
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.refresh_fixture import files_read, main, refresh, slice_files, stage_of
from pipeline.core.errors import PipelineError
from tests.support.paths import REPO

RUN = REPO / "outputs"  # the default run's committed results


def _held(fixture: Path) -> dict[Path, bytes]:
    return {p.relative_to(fixture): p.read_bytes() for p in fixture.rglob("*") if p.is_file()}


def _copied_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN / "metrics", run / "metrics")
    shutil.copytree(RUN / "plots", run / "plots")
    return run


def _edited(path: Path, key: str, value: float) -> None:
    path.write_text(json.dumps(json.loads(path.read_text()) | {key: value}))


def test_a_refreshed_fixture_measures_what_the_run_measures(tmp_path):
    fixture = tmp_path / "registry_fixture"
    files = refresh(RUN, fixture)
    assert set(_held(fixture)) == files
    claims = all_claims(StageOutputs(fixture), FIXTURE_TASKS)
    assert fixture_outputs(claims, fixture) == fixture_outputs(claims, RUN)


def test_a_slice_refresh_changes_that_analysis_s_files_alone(tmp_path):
    fixture = tmp_path / "registry_fixture"
    shutil.copytree(FIXTURE, fixture)
    run = _copied_run(tmp_path)
    heads, table1 = "metrics/clark_heads/mrpc/seed42.json", "metrics/table1/seed42.json"
    _edited(run / heads, "sep_middle", 0.75)  # a new value of the refreshed analysis
    _edited(run / table1, "mrpc.finetuned", 0.5)  # and one of another, left alone
    before = _held(fixture)
    files = refresh(run, fixture, "clark_heads")
    after = _held(fixture)
    assert files == slice_files(fixture, "clark_heads") and Path(heads) in files
    assert {stage_of(f) for f in files} == {"clark_heads"}
    assert {f for f in after if after[f] != before.get(f)} == {Path(heads)}
    assert set(after) == set(before)
    assert json.loads(after[Path(heads)])["sep_middle"] == 0.75


def test_a_slice_refresh_drops_the_files_its_claims_no_longer_read(tmp_path):
    fixture = tmp_path / "registry_fixture"
    shutil.copytree(FIXTURE, fixture)
    stale = fixture / "plots" / "clark_heads" / "mrpc" / "seed42" / "unread.csv"
    stale.parent.mkdir(parents=True)
    stale.write_text("x\n1\n")
    refresh(RUN, fixture, "clark_heads")
    assert not stale.exists()
    assert _held(fixture) == _held(FIXTURE)


def test_a_failed_refresh_leaves_the_old_fixture(tmp_path):
    fixture = tmp_path / "registry_fixture"
    refresh(RUN, fixture)
    before = _held(fixture)
    broken = _copied_run(tmp_path)
    (broken / "metrics" / "clark_coref" / "gap.json").unlink()
    with pytest.raises(PipelineError, match=r"gap\.json is missing"):
        refresh(broken, fixture, "clark_coref")
    assert _held(fixture) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["registry_fixture", "run"]


def test_an_unknown_analysis_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(RUN), "clark_head"])
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: refresh_fixture: no analysis 'clark_head' under pipeline/analyses; "
        "give a package's name"
    ]


def test_only_the_files_the_claims_read_are_taken(tmp_path):
    read = files_read(RUN)
    assert any(p.parts[:2] == ("metrics", "clark_heads") for p in read)
    assert not any(p.parts[:2] == ("metrics", "dump_attention") for p in read)  # no claim's


def test_refreshing_twice_leaves_only_the_fixture(tmp_path):
    fixture = tmp_path / "registry_fixture"
    refresh(RUN, fixture)
    files = refresh(RUN, fixture)  # the second replaces the first whole
    assert [p.name for p in tmp_path.iterdir()] == ["registry_fixture"]  # no .old, no .new
    assert set(_held(fixture)) == files


def test_a_stage_run_once_has_its_metrics_file_in_its_slice():
    assert slice_files(FIXTURE, "prepare") == {Path("metrics/prepare.json")}
