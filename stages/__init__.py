"""One thin entry point per DVC stage; each is also a Hydra app (see pipeline/core/stage.py)."""
