"""clark_coref: the coreference head on GAP (Clark et al. 2019, Sec. 4.3)."""
