"""The claims table: each finding of the papers that the pipeline can test, with the measured
statistic, its interval and a verdict computed by a rule written next to the claim.

- claim.py, rules.py, thresholds.py: a claim, the statistic-with-interval record and the
  verdict rules, every threshold with its reason;
- outputs.py: reading the stages' metrics and tables (the claims read nothing else);
- kovaleva.py, clark.py, michel.py, voita.py, kobayashi.py: the claims of each paper;
- gate.py, seeds.py, selection.py, unchanged.py: the validity gate and the room a removal
  claim needs, the interval over seeds, the best or mean of many units, zero-width intervals;
- table.py: every claim evaluated into one table and flat metrics;
- registry.py (with amendments.yaml): the registry's version and digest, fitted or registered;
- figures.py, write.py, prose.py: the forest plot, the stage's files, the docs' blocks;
- reference.py: a kept reference run judged again with the current claims;
- across_models.py: the claims tables of several experiments (one per model) side by side.
"""
