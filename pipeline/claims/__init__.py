"""The claims table: each finding of the papers that the pipeline can test, with the measured
statistic, its interval and a verdict computed by a rule written next to the claim.

- rules.py: the statistic-with-interval record and the verdict rules;
- outputs.py: reading the stages' metrics and tables (the claims read nothing else);
- kovaleva.py, clark.py, michel.py, kobayashi.py: the claims of each paper;
- table.py: every claim evaluated into one table and flat metrics;
- across_models.py: the claims tables of several experiments (one per model) side by side.
"""
