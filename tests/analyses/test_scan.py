"""The scan that finds the analysis packages (pipeline/analyses/__init__.py): a package
named in two folders fails in one line, a folder without Python files (a leftover holding
only `__pycache__`) is no analysis, a test's toy analyses are scanned and importable for
the test alone, and the claims modules come in the report's order."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from pipeline import analyses
from pipeline.analyses import catalog
from pipeline.claims.evaluate import claim_modules
from pipeline.core.errors import PipelineError
from tests.support.toy_analysis import scanned, write_toy


def package(root: Path, name: str) -> Path:
    """An (empty) analysis package `name` under `root`."""
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text('"""A toy."""\n')
    return root / name


def test_a_package_in_two_folders_fails_naming_it(tmp_path):
    first, second = package(tmp_path / "a", "toy").parent, package(tmp_path / "b", "toy").parent
    duplicate = "analysis package toy is in more than one folder"
    with scanned(first, second), pytest.raises(PipelineError, match=duplicate):
        analyses.names()


def test_a_toy_named_as_a_project_analysis_fails_naming_it(toy_analyses):
    package(toy_analyses, "ablate")
    with pytest.raises(PipelineError, match="analysis package ablate is in more than one folder"):
        analyses.names()


def test_a_toy_analysis_is_scanned_and_imported_for_the_block_alone(tmp_path):
    before = analyses.names()
    write_toy(tmp_path)
    with scanned(tmp_path):
        assert analyses.names() == sorted([*before, "toy"])
        assert analyses.part("toy", "results").ToyMetrics.stage == "toy"
        assert analyses.folder("toy") == tmp_path / "toy"
        assert analyses.conf_dir("toy") == tmp_path / "conf"
    assert analyses.names() == before
    assert not [name for name in sys.modules if name.startswith("pipeline.analyses.toy")]
    assert not hasattr(analyses, "toy")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pipeline.analyses.toy.results")


def test_a_folder_holding_only_bytecode_is_no_analysis(tmp_path):
    package(tmp_path, "toy")
    leftover = tmp_path / "removed" / "__pycache__"
    leftover.mkdir(parents=True)
    (leftover / "claims.cpython-311.pyc").write_bytes(b"")
    assert analyses.names(tmp_path) == ["toy"]


def test_the_claims_modules_follow_the_reports_sections():
    sections = list(catalog.sections())
    with_claims = [name for name in analyses.names() if analyses.part(name, "claims")]
    in_sections = [name for name in sections if name in with_claims]
    assert in_sections != sorted(in_sections)  # else name order would pass too
    unplaced = sorted(name for name in with_claims if name not in sections)
    assert list(claim_modules()) == in_sections + unplaced
