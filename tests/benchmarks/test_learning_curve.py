"""The learning-curve study's record (benchmarks/records/learning_curve.jsonl): the benchmarks
page shows its table as the study's script prints it, and the recipe the quick profile gives
each task is one the record says learned it."""

from __future__ import annotations

import json

from benchmarks.bench_cost import profile_params
from benchmarks.learning_curve import table
from tests.support.paths import REPO

RECORD = REPO / "benchmarks/records/learning_curve.jsonl"


def records() -> list[dict]:
    return [json.loads(line) for line in RECORD.read_text().splitlines() if line]


def test_the_benchmarks_page_shows_the_records_table():
    assert table(records()) in (REPO / "docs/benchmarks.md").read_text()


def test_the_quick_profiles_mrpc_recipe_learned_on_two_seeds():
    quick = profile_params("quick")
    finetune = quick["finetune"]
    recipe = {
        "model": quick["model"]["name"],
        "task": "mrpc",
        "train_rows": quick["prepare"]["min_rows"]["mrpc"]["train"],
        "epochs": finetune["epochs_by_task"]["mrpc"],
        "learning_rate": finetune["learning_rate"],
        "max_length": quick["shared"]["max_length"],
    }
    runs = [r for r in records() if all(r[key] == value for key, value in recipe.items())]
    assert len({r["seed"] for r in runs}) >= 2, recipe
    assert all(r["learned"] for r in runs)
