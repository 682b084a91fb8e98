"""clark_heads: where the heads attend, their entropy and clustering (Clark et al. 2019)."""
