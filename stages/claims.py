"""claims: each finding of the papers that this run can test, with the paper's statement and
number beside the measured statistic, its 95% interval and a verdict (supported /
contradicted / inconclusive / underpowered / not testable) from a rule declared next to the
claim (pipeline/claims/; thresholds in pipeline/claims/thresholds.py).

Reads only other stages' metrics (outputs/metrics/) and ablation tables
(outputs/plots/ablate/<task>/seed<seed>/), for every fine-tuning seed of `seeds`; writes
outputs/plots/claims/claims.csv (one row per claim: the verdict over all seeds whose models
learned their task, its interval over seeds and examples, the per-seed agreement, the
threshold's sensitivity and the detectable effect), claims_by_seed.csv (seed, claim,
estimate, interval, verdict, reason), summary.txt and results.md (the Markdown table the
docs quote), and outputs/metrics/claims.json with flat keys `<claim>.statistic`,
`.ci_low`, `.ci_high`, `.verdict`, so `dvc metrics diff` shows a verdict that changes
between commits.
"""

from __future__ import annotations

from pipeline.claims.outputs import StageOutputs
from pipeline.claims.prose import results_markdown
from pipeline.claims.table import all_claims, evaluate, flat_metrics, summary
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    out = StageOutputs(stage.upstream())
    seeds = [stage.cfg.seed, *(s for s in stage.cfg.seeds if s != stage.cfg.seed)]
    table, by_seed = evaluate(all_claims(out, stage.task_names), out, seeds)
    stage.write_outputs(
        "claims",
        tables={"claims": table, "claims_by_seed": by_seed},
        texts={"summary.txt": summary(table), "results.md": results_markdown(table)},
        metrics=flat_metrics(table),
    )


if __name__ == "__main__":
    stage_main(run)
