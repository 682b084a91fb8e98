"""The registry's fixture is refreshed from a run with one command: it then holds the files
the fixture's claims read, and every claim measures on it what it measures on the run; a
second refresh leaves no sibling behind (`.old`, `.new`)."""

from __future__ import annotations

import shutil

import pytest

from pipeline.claims.evaluate import declared_claims
from pipeline.claims.measurement_pins import FIXTURE_TASKS, fixture_outputs, fixture_relations
from pipeline.claims.refresh_fixture import files_read, refresh
from pipeline.core.errors import PipelineError
from tests.support.paths import REPO

RUN = REPO / "outputs"  # the default run's committed results


def test_a_refreshed_fixture_measures_what_the_run_measures(tmp_path):
    fixture = tmp_path / "registry_fixture"
    files = refresh(RUN, fixture)
    assert {p.relative_to(fixture) for p in fixture.rglob("*") if p.is_file()} == files
    claims = declared_claims(FIXTURE_TASKS, fixture_relations(fixture))
    assert fixture_outputs(claims, fixture) == fixture_outputs(claims, RUN)


def test_a_failed_refresh_leaves_the_old_fixture(tmp_path):
    fixture = tmp_path / "registry_fixture"
    refresh(RUN, fixture)
    before = {p: p.read_bytes() for p in fixture.rglob("*") if p.is_file()}
    broken = tmp_path / "run"
    shutil.copytree(RUN / "metrics", broken / "metrics")
    shutil.copytree(RUN / "plots", broken / "plots")
    (broken / "metrics" / "clark_coref" / "gap.json").unlink()
    with pytest.raises(PipelineError, match=r"gap\.json is missing"):
        refresh(broken, fixture)
    assert {p: p.read_bytes() for p in fixture.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["registry_fixture", "run"]


def test_only_the_files_the_claims_read_are_taken(tmp_path):
    read = files_read(RUN)
    assert any(p.parts[:2] == ("metrics", "clark_heads") for p in read)
    assert not any(p.parts[:2] == ("metrics", "dump_attention") for p in read)  # no claim's


def test_refreshing_twice_leaves_only_the_fixture(tmp_path):
    fixture = tmp_path / "registry_fixture"
    refresh(RUN, fixture)
    files = refresh(RUN, fixture)  # the second replaces the first whole
    assert [p.name for p in tmp_path.iterdir()] == ["registry_fixture"]  # no .old, no .new
    assert {p.relative_to(fixture) for p in fixture.rglob("*") if p.is_file()} == files
