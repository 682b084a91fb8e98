"""Where the tests find the repository they check and their own data files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]  # the repository's root
FIXTURES = Path(__file__).resolve().parent / "fixtures"  # small data files the tests read


def shared_data_folder() -> Path:
    """The offline data sets (../shared/data, or $DARK_SECRETS_DATA). Where they are missing
    a test that needs them is skipped, and says so in the summary; in CI (CI=true in the
    environment, as CI services set it) it fails instead, so no data test goes unrun there."""
    path = Path(os.environ.get("DARK_SECRETS_DATA", REPO.parent / "shared" / "data"))
    if not path.exists():
        missing = f"offline data not found at {path}; set DARK_SECRETS_DATA to its folder"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(missing)
        pytest.skip(missing)
    return path
