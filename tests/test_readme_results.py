"""Numbers in the README come from the outputs: every `<!-- results:NAME -->` block holds
exactly its results file (pipeline/claims/prose.py), and the seed-interval coverage file is
what the simulation gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.claims.prose import RESULTS, marked, readme_with_results
from pipeline.claims.seeds import coverage_table

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_each_readme_block_holds_its_results_file(name):
    readme = (REPO / "README.md").read_text()
    block = marked(name).search(readme)
    assert block, f"README.md lost its `<!-- results:{name} -->` block"
    assert block.group(2) == (REPO / RESULTS[name]).read_text(), (
        f"README.md's {name} block differs from {RESULTS[name]}: "
        "run `python -m pipeline.claims.prose`"
    )


def test_rewriting_the_readme_changes_nothing():
    readme = (REPO / "README.md").read_text()
    assert readme_with_results(readme, REPO) == readme


def test_the_coverage_file_is_the_simulation():
    path = REPO / RESULTS["seed-coverage"]
    assert path.read_text() == coverage_table() + "\n"
