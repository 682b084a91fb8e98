"""measures: attention weights, value-weighted norms and rollout compared per layer (extension)."""
