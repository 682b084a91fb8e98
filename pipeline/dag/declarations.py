"""Every DVC stage, each declared once in its analysis's package
(pipeline/analyses/<name>/declaration.py, with the `Stage` of pipeline/dag/stage_types.py)
and collected here by the catalog of analyses (pipeline/analyses/catalog.py), each after the
stages whose outputs it reads. dvc.yaml is generated from these declarations and from the
imports of each stage's module (`python -m pipeline.dag.dvc_yaml`).

Adding a stage: write stages/<name>.py, declare its `Stage` in its analysis's package,
regenerate dvc.yaml.
"""

from __future__ import annotations

from pipeline.analyses.catalog import stages
from pipeline.dag.stage_types import Stage

STAGES: tuple[Stage, ...] = stages()


def stage(name: str) -> Stage:
    """The declaration of stage `name`."""
    found = [s for s in STAGES if s.name == name]
    if not found:
        raise KeyError(
            f"no stage '{name}' is declared; declare it in pipeline/analyses/{name}/declaration.py"
        )
    return found[0]
