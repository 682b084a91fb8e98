"""The claims table: each finding of the papers that the pipeline can test, with the measured
statistic, its interval and a verdict computed by a rule written next to the claim.

The claims themselves live with the analysis whose results they chiefly read, in the
`claims` module of its package (`pipeline.analyses.<name>.claims`): each declares
`claims(scope)` (the claims for a `claim.Scope`: the run's tasks and the units it scored,
such as UD relations), `SETTINGS` (the config keys each claim family's measurement depends
on), `cases()` (its claims' synthetic cases) and, where it lends the engine a gate's reading,
a kind of unit, a task's dev rows or the registry's tasks, `PROVIDES`; it reads other
stages' results as typed results (the `results` modules of the analyses, on
`pipeline.core.results`). This package is the machinery they share, and names no analysis:
it finds them by scanning (`pipeline.analyses`):

- claim.py, rules.py, thresholds.py: a claim and its scope, the statistic-with-interval
  record and the verdict rules (with `settle`), every threshold with its reason;
- outputs.py: the stages' typed results, read from an outputs folder or held in memory (the
  claims read nothing else);
- cases.py: a claim's synthetic cases (typed results in memory and the verdict they must
  give), which each claims module declares beside its claims (`cases()`);
- provides.py: the claims modules found by the scan, and what their `PROVIDES` lend;
- validity.py, seeds.py, strata.py, selection.py, standout.py, unchanged.py: the validity
  and headroom gates' cut-offs, the interval over seeds, a statistic pooled over
  independent strata (tasks), the best or mean of many units, heads that stand out,
  zero-width intervals;
- evaluate.py, readings.py: the claims collected from every analysis, evaluated into one
  table, its flat metrics and headline; a finding read more than one way, one row per
  reading and one for the finding;
- judge.py: the stage's files (table, per-seed table, headline, Markdown, forest plot);
- registry.py (with amendments.yaml), measurement_pins.py, verdict_pins.py: the registry's
  version and digest, fitted or registered, and what the digest pins; refresh_fixture.py:
  one analysis's slice of the digest's fixture refreshed from a run, with the files its
  claims read; draft_entry.py: the ledger's draft version with the digest;
- update.py: the one command that adds or updates a finding, every step after its package;
- figures.py, table_markdown.py, prose.py, sensitivity.py: the forest plot, the table as
  Markdown, the docs' generated blocks, the table's column of verdicts at half and double
  the threshold;
- reference.py, kept_run.py: a kept reference run, or a kept whole run, judged again with
  the current claims;
- across_models.py: the claims tables of several experiments (one per model) side by side;
- coverage.py, share_simulation.py: the simulations behind the seed interval's coverage
  and the pattern-type shares' (at observed prevalence, judged by the share claims' rules).
"""
