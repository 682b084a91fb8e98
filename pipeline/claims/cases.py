"""Each claim's synthetic cases: typed results held in memory and the verdict the claim must
give on them, declared beside the claim (`cases()` of its analysis's claims module).

A case names one claim as declared for its scope, the results it reads (`(results type,
*run) -> instance`, pipeline/core/results.py) and the verdict; `verdict_of` judges it as the
claims stage does, gates included, so a claim about a fine-tuned model needs a model that
learned its task (`learned_row`) and a removal claim room above chance on its rows
(`ablation_rows`). tests/claims/test_cases.py runs every case and fails for a registered
claim family that has none, so a new claim brings its own case and edits no shared fixture.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.analyses.ablate.results import AblateMetrics, AblationRows
from pipeline.analyses.table1.results import Table1Metrics, TaskRow
from pipeline.claims.claim import Claim, Scope
from pipeline.claims.evaluate import declared_claims, evaluate
from pipeline.claims.outputs import SyntheticOutputs
from pipeline.claims.rules import Verdict
from pipeline.core.results import Family, Results
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
        found = [c for c in declared_claims(self.scope.tasks, self.scope.relations)
                 if c.name == self.claim]  # fmt: skip
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


def learned_row(ahead: float = 0.1, learned: bool = True) -> TaskRow:
    """A task's Table 1 row: fine-tuned 0.8 (0.55 when not `learned`: its margin over chance
    straddles 0), `ahead` of random init (+-0.05), 0.3 above no fine-tuning."""
    return TaskRow(
        finetuned=interval(0.8 if learned else 0.55, 0.05),
        finetuned_minus_chance=interval(0.3, 0.05) if learned else interval(0.03, 0.05),
        finetuned_minus_pretrained=interval(0.3, 0.05),
        finetuned_minus_random_init=interval(ahead, 0.05),
        chance=0.5,
        pretrained=0.5,
    )


def table1(rows: Mapping[str, TaskRow]) -> dict[tuple, Results]:
    """Table 1 of seed `SEED` with these tasks' rows."""
    return {(Table1Metrics, SEED): Table1Metrics(Family(rows))}


def ablation_rows(task: str, baseline: float = 0.8, rows: int = 96) -> dict[tuple, Results]:
    """`task`'s ablation rows (half of each label: chance 0.5) and the unablated model's
    accuracy on them, `baseline` +-0.08."""
    return {
        (AblateMetrics, task, SEED): AblateMetrics(
            float(rows), interval(baseline, 0.08), "accuracy"
        ),
        (AblationRows, task, SEED): AblationRows.of(label=[0, 1] * (rows // 2)),
    }
