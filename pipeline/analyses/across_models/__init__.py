"""across_models: the claims tables of several experiments (one per model) side by side."""
