"""claims: each finding of the papers that this run can test, with the measured statistic,
its 95% interval and a verdict (supported / contradicted / inconclusive) from a rule written
next to the claim (pipeline/claims/), for every fine-tuning seed of `seeds`.

Reads only other stages' metrics (outputs/metrics/) and ablation tables
(outputs/plots/ablate/<task>/seed<seed>/); writes outputs/plots/claims/claims.csv (the primary
seed's table, with `seeds_same_verdict`: how many seeds give its verdict), claims_by_seed.csv
(seed, claim, estimate, interval, verdict) and summary.txt, and outputs/metrics/claims.json
with the primary seed's flat keys `<claim>.statistic`, `<claim>.ci_low`, `<claim>.ci_high`
and `<claim>.verdict`, so `dvc metrics diff` shows a verdict that changes between commits,
and `verdicts.same_in_every_seed`.
"""

from __future__ import annotations

from pipeline.claims.outputs import StageOutputs
from pipeline.claims.table import (
    all_claims,
    by_seed,
    evaluate,
    flat_metrics,
    summary,
    with_seed_agreement,
)
from pipeline.core.io import write_json, write_table, write_text
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    out = StageOutputs(stage.upstream())
    tables = {
        seed: evaluate(all_claims(out, stage.task_names, seed), out) for seed in stage.cfg.seeds
    }
    seeds = by_seed(tables)
    table = with_seed_agreement(tables[stage.cfg.seed], seeds)
    plots = stage.out("plots", "claims")
    write_table(plots / "claims.csv", table)
    write_table(plots / "claims_by_seed.csv", seeds)
    write_text(plots / "summary.txt", summary(table))
    write_json(stage.out("metrics", "claims.json"), flat_metrics(table))


if __name__ == "__main__":
    stage_main(run)
