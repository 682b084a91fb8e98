"""The scan that finds the analysis packages (pipeline/analyses/__init__.py): a package
named in two folders fails in one line, a folder without Python files (a leftover holding
only `__pycache__`) is no analysis, and the claims modules come in the report's order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline import analyses
from pipeline.analyses import catalog
from pipeline.claims.evaluate import claim_modules
from pipeline.core.errors import PipelineError


def package(root: Path, name: str) -> Path:
    """An (empty) analysis package `name` under `root`."""
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text('"""A toy."""\n')
    return root / name


def test_a_package_in_two_folders_fails_naming_it(tmp_path, monkeypatch):
    first, second = package(tmp_path / "a", "toy").parent, package(tmp_path / "b", "toy").parent
    monkeypatch.setenv(analyses.EXTRA_ROOTS, os.pathsep.join([str(first), str(second)]))
    with pytest.raises(PipelineError, match="analysis package toy is in more than one folder"):
        analyses.names()


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
