"""Judging a kept run again keeps the verdicts it was registered with, however often."""

from __future__ import annotations

import pandas as pd

from pipeline.claims.kept_run import registered_beside


def _table(verdicts: dict[str, str], registration: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "claim": list(verdicts),
            "verdict": list(verdicts.values()),
            "registration": registration,
            "registry_version": 3,
        }
    )


def test_registered_verdicts_survive_a_second_judgement() -> None:
    first = _table({"a": "supported", "b": "not testable"}, "registered").assign(registry_version=1)
    now = _table({"a": "inconclusive", "b": "supported"}, "fitted")
    once = registered_beside(now, first)
    assert list(once["registered_verdict"]) == ["supported", "not testable"]
    twice = registered_beside(now, once.assign(registration="fitted"))
    assert list(twice["registered_verdict"]) == ["supported", "not testable"]
    assert list(twice["registered_version"]) == [1, 1]


def test_a_claim_added_since_has_no_registered_verdict() -> None:
    first = _table({"a": "supported"}, "registered")
    now = _table({"a": "supported", "new": "inconclusive"}, "fitted")
    assert list(registered_beside(now, first)["registered_verdict"]) == ["supported", ""]
