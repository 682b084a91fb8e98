"""gates: hard-concrete head gates with an L0 penalty, swept over lambda (Voita et al. 2019)."""
