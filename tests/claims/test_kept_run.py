"""Judging a kept run again keeps the verdicts it was registered with, however often; a claim
on a stage the kept run never ran is not testable, and says so."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import pytest

from pipeline.claims.claim import Claim, Source
from pipeline.claims.kept_run import KeptRunOutputs, NotRun, measured_if_run, registered_beside
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.thresholds import DIRECTION
from pipeline.core.errors import PipelineError
from pipeline.core.results import Covers, Metrics


@dataclass(frozen=True)
class LaterMetrics(Metrics):
    """The results of a stage added after a kept run."""

    stage = "later"
    covers = Covers.RUN

    value: float


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


def _later_claim() -> Claim:
    return Claim(
        name="extension.later",
        source=Source("A paper", "Sec. 1", "a statement"),
        finding="a finding",
        statistic="a statistic",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: Estimate(out.read(LaterMetrics).value, 0.0, 1.0),
        extension=True,
    )


def test_a_claim_on_a_stage_the_kept_run_never_ran_is_not_testable(tmp_path) -> None:
    (tmp_path / "metrics").mkdir()
    measured = measured_if_run(_later_claim()).measure(KeptRunOutputs(tmp_path), 42)
    assert measured.undefined
    assert measured.note == ("the kept run predates stage later: it holds none of its results")


def test_a_file_missing_from_a_stage_the_kept_run_ran_still_fails(tmp_path) -> None:
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "other.json").write_text(json.dumps({}))
    (tmp_path / "plots" / "later").mkdir(parents=True)  # it ran, but its metrics are gone
    with pytest.raises(PipelineError, match=r"later\.json is missing") as failed:
        measured_if_run(_later_claim()).measure(KeptRunOutputs(tmp_path), 42)
    assert not isinstance(failed.value, NotRun)
