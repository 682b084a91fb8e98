"""Fixtures shared by the registry-digest tests (test_pins.py, test_verdict_pins.py)."""

import pytest

from pipeline.claims.evaluate import all_claims
from pipeline.claims.measurement_pins import FIXTURE, FIXTURE_TASKS
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.registry import registry_digest


@pytest.fixture(scope="module")
def fixture_claims():
    """Every claim as declared for the registry fixture's tasks and the units it scored."""
    return all_claims(StageOutputs(FIXTURE), FIXTURE_TASKS)


@pytest.fixture(scope="module")
def committed(fixture_claims) -> str:
    """The digest of the claims as the code declares them, before a test changes anything."""
    return registry_digest(fixture_claims)
