"""Parallel execution of the DVC DAG on submitit (its local executor, or Slurm) or Ray.

DVC stays the source of truth: its graph and planner say which stages to visit and in which
order (`dag`), it decides what is stale and records every finished run in the cache and
dvc.lock (`record`); jobs run only a stage's command (`command`), wherever the executor puts
them (`executors`); `runner` is the loop between them and `__main__` the command line.

dvc.yaml itself is generated (`dvc_yaml`) from one declaration per stage (`declarations`) and
the project files each stage's module imports (`imports`).
"""
