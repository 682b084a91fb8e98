"""clark_syntax: dependency-relation heads and the attention-only probe on UD (Clark et al.
2019)."""
