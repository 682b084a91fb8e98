"""claims: each finding of the papers that this run can test, with the measured statistic,
its 95% interval and a verdict (supported / contradicted / inconclusive) from a rule written
next to the claim (pipeline/claims/).

Reads only other stages' metrics (outputs/metrics/) and the primary seed's ablation tables
(outputs/plots/ablate/<task>/seed<seed>/); writes outputs/plots/claims/claims.csv and
summary.txt, and outputs/metrics/claims.json with flat keys `<claim>.statistic`,
`<claim>.ci_low`, `<claim>.ci_high` and `<claim>.verdict`, so `dvc metrics diff` shows a
verdict that changes between commits.
"""

from __future__ import annotations

from pipeline.claims.outputs import StageOutputs
from pipeline.claims.table import all_claims, evaluate, flat_metrics, summary
from pipeline.core.io import write_json, write_table, write_text
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    out = StageOutputs(stage.upstream())
    table = evaluate(all_claims(out, stage.task_names, stage.cfg.seed), out)
    plots = stage.out("plots", "claims")
    write_table(plots / "claims.csv", table)
    write_text(plots / "summary.txt", summary(table))
    write_json(stage.out("metrics", "claims.json"), flat_metrics(table))


if __name__ == "__main__":
    stage_main(run)
