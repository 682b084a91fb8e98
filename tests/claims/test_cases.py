"""Every claim carries its own synthetic cases (pipeline/claims/cases.py): one test runs
each case of every analysis's claims module and checks its verdict, and fails for a
registered claim family without a case, as scikit-learn's `parametrize_with_checks` runs
its checks on every estimator."""

from __future__ import annotations

import pytest

from pipeline.claims.cases import Case, verdict_of
from pipeline.claims.evaluate import claim_modules
from pipeline.claims.measurement_pins import family
from pipeline.claims.registry import registered_claims


def declared_cases() -> list[tuple[str, Case]]:
    """Every case, with the analysis whose claims module declares it."""
    found = []
    for name, module in claim_modules().items():
        declare = getattr(module, "cases", None)  # a module without: its families fail below
        found += [(name, case) for case in (declare() if declare else [])]
    return found


CASES = declared_cases()
FAMILIES = sorted({family(claim) for claim in registered_claims()})


@pytest.mark.parametrize(
    ("analysis", "case"), CASES, ids=[f"{a}:{c.claim}:{c.verdict}" for a, c in CASES]
)
def test_each_case_gives_its_verdict(analysis, case):
    assert verdict_of(case) == case.verdict, f"{analysis}: {case.claim}: {case.why}"


@pytest.mark.parametrize("claim_family", FAMILIES)
def test_every_registered_claim_family_has_a_case(claim_family):
    covered = {family(case.declared()) for _, case in CASES}
    assert claim_family in covered, f"{claim_family} declares no synthetic case beside it"


def test_every_case_is_about_a_claim_of_its_own_analysis():
    for analysis, case in CASES:
        own = claim_modules()[analysis].claims(case.scope)
        assert case.claim in {c.name for c in own}, (analysis, case.claim)
