"""Each claim's synthetic cases: typed results held in memory and the verdict the claim must
give on them, declared beside the claim (`cases()` of its analysis's claims module).

A case names one claim as declared for its scope, the results it reads (`(results type,
*run) -> instance`, pipeline/core/results.py) and the verdict; `verdict_of` judges it as the
claims stage does, gates included, so a claim about a fine-tuned model needs a model that
learned its task (`learned_results`, from the analysis that declares the learning gate) and
a removal claim room above chance on its rows. tests/claims/test_cases.py runs every case
and fails for a registered claim family that has none, so a new claim brings its own case
and edits no shared fixture.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.claims import provides
from pipeline.claims.claim import Claim, Scope
from pipeline.claims.evaluate import declared_claims, evaluate
from pipeline.claims.outputs import SyntheticOutputs
from pipeline.claims.rules import Verdict
from pipeline.core.errors import PipelineError
from pipeline.core.results import Results
from pipeline.core.stats import Interval

SEED = 42  # the fine-tuning seed a case's results are of
SST2 = Scope(("sst2",))  # a case's scope unless it says otherwise


@dataclass(frozen=True)
class Case:
    """Claim `claim` (its id, as declared for `scope`) gives `verdict` on `results`; `why`
    says what the case plants."""

    claim: str
    verdict: Verdict
    results: Mapping[tuple, Results]
    why: str
    scope: Scope = SST2

    def declared(self) -> Claim:
        """The claim the case is about; one its scope does not declare fails in one line."""
        found = [c for c in declared_claims(self.scope) if c.name == self.claim]
        if not found:
            raise ValueError(
                f"case {self.why!r}: no claim {self.claim} is declared for {self.scope}"
            )
        return found[0]


def verdict_of(case: Case) -> Verdict:
    """The verdict the claims stage gives the case's claim on its results (seed `SEED`)."""
    table, _ = evaluate([case.declared()], SyntheticOutputs(case.results), [SEED])
    return table.loc[table["claim"] == case.claim, "verdict"].iloc[0]


def interval(estimate: float, half_width: float) -> Interval:
    return Interval(estimate, estimate - half_width, estimate + half_width)


def learned_results(task: str, learned: bool = True) -> dict[tuple, Results]:
    """Results of seed `SEED` under which `task`'s model learned its task (or did not), from
    the analysis that declares the learning gate (provides.LearnedGate.case)."""
    gate = provides.lent().learned
    if gate is None:
        raise PipelineError(
            "cases: no analysis declares the learning gate; declare one (PROVIDES of "
            "pipeline/analyses/<name>/claims.py)"
        )
    return gate.case(task, SEED, learned)
