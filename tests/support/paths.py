"""Where the tests find the repository they check and their own data files."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository's root
FIXTURES = Path(__file__).resolve().parent / "fixtures"  # small data files the tests read
