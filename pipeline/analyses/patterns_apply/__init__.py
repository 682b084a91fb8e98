"""patterns_apply: the share of each attention-pattern type per task (Kovaleva et al. Figs. 1-2)."""
