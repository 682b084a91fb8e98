"""cross_seed: how much fine-tuning results move with the seed, for every task."""
