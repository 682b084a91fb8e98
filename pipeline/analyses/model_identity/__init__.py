"""The model's identity by its files, for DVC (stages/model_identity.py)."""
