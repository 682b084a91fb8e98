"""The claims stage's `findings` metric: the profile, the papers' findings counted by
verdict (a letter each), the tasks and the seeds in one line short enough for a column of
`dvc exp show` (docs/comparing-runs.md)."""

from __future__ import annotations

import pandas as pd

from pipeline.claims.evaluate import VERDICT_LETTERS, findings
from pipeline.claims.rules import VERDICTS


def test_findings_count_the_papers_claims_only_with_their_tasks_and_seeds() -> None:
    table = pd.DataFrame(
        {
            "kind": ["paper", "paper", "paper", "extension", "paper"],
            "verdict": ["supported", "supported", "not testable", "supported", "contradicted"],
        }
    )
    assert findings(table, "quick", ["sst2", "rte"], [42]) == (
        "quick 2S 1C 0I 0U 1N 0D 0R sst2,rte s42"
    )
    assert findings(table, "standard", ["mrpc"], [42, 43, 44]).endswith(" mrpc s42,43,44")
    assert list(VERDICT_LETTERS) == list(VERDICTS)  # one letter per verdict, in order
    assert len(set(VERDICT_LETTERS.values())) == len(VERDICTS)


def test_the_quick_profiles_findings_fit_a_column_of_a_terminal() -> None:
    table = pd.DataFrame({"kind": ["paper"] * 45, "verdict": ["inconclusive"] * 45})
    line = findings(table, "quick", ["sst2", "mrpc", "rte", "stsb"], [42])
    assert len(line) <= 50, line
