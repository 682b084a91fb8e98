"""The claims table: each finding of the papers that the pipeline can test, with the measured
statistic, its interval and a verdict computed by a rule written next to the claim.

- claim.py, rules.py, thresholds.py: a claim, the statistic-with-interval record and the
  verdict rules (with `settle`), every threshold with its reason;
- outputs.py: reading the stages' metrics and tables (the claims read nothing else);
- kovaleva.py, clark.py, michel.py, voita.py, kobayashi.py: the claims of each paper (and
  the project's extensions built on them);
- shares.py: pattern-type shares corrected for the classifier's errors;
- validity.py, seeds.py, selection.py, standout.py, unchanged.py: the validity and headroom
  gates, the interval over seeds, the best or mean of many units, heads that stand out,
  zero-width intervals;
- evaluate.py: every claim evaluated into one table, its flat metrics and headline;
- judge.py: the stage's files (table, per-seed table, headline, Markdown, forest plot);
- registry.py (with amendments.yaml), measurement_pins.py, verdict_pins.py: the registry's
  version and digest, fitted or registered, and what the digest pins;
- figures.py, prose.py: the forest plot, the docs' generated blocks;
- reference.py, kept_run.py: a kept reference run, or a kept whole run, judged again with
  the current claims;
- across_models.py: the claims tables of several experiments (one per model) side by side;
- coverage.py, boundary_coverage.py, design_coverage.py: the simulations behind the
  intervals' coverage.
"""
