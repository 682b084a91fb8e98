"""claims: each finding of the papers that this run can test, with the paper's statement and
number beside the measured statistic, its 95% interval and a verdict (supported /
contradicted / inconclusive / underpowered / not testable / seed-dependent) from a rule
declared next to the claim (pipeline/claims/; thresholds in pipeline/claims/thresholds.py).

Reads only other stages' metrics (outputs/metrics/) and ablation tables
(outputs/plots/ablate/<task>/seed<seed>/), for every fine-tuning seed of `seeds`; writes
outputs/plots/claims/claims.csv (one row per claim: the verdict over all seeds whose models
learned their task, its interval over seeds and examples, the per-seed agreement, the
threshold's sensitivity, the detectable effect, and the registry version and digest the
verdict was judged by, marked `fitted` or `registered`), claims_by_seed.csv (seed, claim,
estimate, interval, verdict, reason), summary.txt and results.md (the Markdown table the
docs quote), outputs/figures/claims/forest.png (every claim against its threshold) and
outputs/metrics/claims.json with flat keys `<claim>.statistic`, `.ci_low`, `.ci_high`,
`.verdict` and `registry.version` / `.status` / `.digest` / `.verdicts`, so `dvc metrics
diff` shows a verdict or a registry that changes between commits, and `findings`: the
profile, the papers' findings counted by verdict, the tasks and the seeds in one short line
(`quick 26S 1C 7I 2U 9N 0D sst2,mrpc,rte,stsb s42`) for `dvc exp show`.
"""

from __future__ import annotations

from pipeline.claims.evaluate import findings
from pipeline.claims.judge import judge_claims
from pipeline.claims.outputs import StageOutputs
from pipeline.core.stage import StageRun, stage_main


def run(stage: StageRun) -> None:
    out = StageOutputs(stage.upstream(reader="claims"))
    seeds = [stage.cfg.seed, *(s for s in stage.cfg.seeds if s != stage.cfg.seed)]
    files = judge_claims(out, stage.task_names, seeds, stage.cfg.model.name)
    line = findings(files.tables["claims"], stage.cfg.experiment_name, stage.task_names, seeds)
    stage.write_outputs(
        "claims",
        tables=files.tables,
        texts=files.texts,
        figures=files.figures,
        metrics=files.metrics | {"findings": line},
    )


if __name__ == "__main__":
    stage_main(run)
