"""dvc.yaml's stages as the DAG tests read them: expanded for one task and seed, with each
stage's module and the project code files among its deps."""

from __future__ import annotations

import yaml

A_TASK = "sst2"  # matrix stages are checked with this task
A_SEED = "42"  # ... and this seed


def dvc_stages(text: str) -> dict[str, dict]:
    """Stage name -> definition, matrix stages expanded for one task and seed."""
    expanded = {}
    for name, spec in yaml.safe_load(text)["stages"].items():
        matrix = spec.get("matrix", {})
        item = "-".join(v for k, v in (("task", A_TASK), ("seed", A_SEED)) if k in matrix)
        one = yaml.safe_dump(spec).replace("${item.task}", A_TASK).replace("${item.seed}", A_SEED)
        expanded[f"{name}@{item}" if matrix else name] = {
            **yaml.safe_load(one),
            "per_task": "task" in matrix,
        }
    return expanded


def stage_module(spec: dict) -> str:
    words = spec["cmd"].split()
    return words[words.index("-m") + 1]


def code_in_deps(spec: dict) -> set[str]:
    """The deps of a stage that are project code (under pipeline/ or stages/)."""
    return {
        d
        for d in spec.get("deps", [])
        if d.startswith(("pipeline/", "stages/")) and d.endswith(".py")  # not package data
    }
