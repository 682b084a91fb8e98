"""Numbers in the README and docs/ come from the outputs: every `<!-- results:NAME -->` block
holds exactly what its generator makes from the output files (pipeline/claims/prose.py),
wherever the block lives (the seed-interval coverage file is checked in
tests/claims/test_coverage.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.claims.prose import MARKER, RESULTS, marked, table1_beside_paper, with_results
from pipeline.core.errors import PipelineError
from tests.support.paths import REPO

MARKDOWN = [Path("README.md"), *sorted(p.relative_to(REPO) for p in REPO.glob("docs/**/*.md"))]


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_each_block_holds_what_its_outputs_give(name):
    block = RESULTS[name]
    text = (REPO / block.doc).read_text()
    found = marked(name).search(text)
    assert found, f"{block.doc} lost its `<!-- results:{name} -->` block"
    assert found.group(2) == block.text(REPO), (
        f"{block.doc}'s {name} block differs from {', '.join(map(str, block.sources))}: "
        "run `python -m pipeline.claims.prose`"
    )


@pytest.mark.parametrize("doc", MARKDOWN, ids=str)
def test_rewriting_a_doc_changes_nothing(doc):
    """Also fails on a marker that no generator knows or that sits in the wrong file."""
    text = (REPO / doc).read_text()
    assert with_results(text, doc, REPO) == text


def test_every_marker_is_a_known_block():
    names = {name for doc in MARKDOWN for name in MARKER.findall((REPO / doc).read_text())}
    assert names == set(RESULTS)


def test_a_stray_marker_fails():
    text = "<!-- results:no-such-block -->\n1\n<!-- /results:no-such-block -->\n"
    with pytest.raises(PipelineError, match="no-such-block"):
        with_results(text, Path("docs/x.md"), REPO)


def test_table1_block_sets_each_score_beside_the_papers(tmp_path):
    keys = ("pretrained", "random_init", "finetuned", "chance")
    values = {"rte.examples": 277}
    for i, key in enumerate(keys):
        values |= {f"rte.{key}": 0.5 + i / 100, f"rte.{key}_ci_low": 0.4, f"rte.{key}_ci_high": 0.6}
    (tmp_path / "t.json").write_text(json.dumps(values))
    lines = table1_beside_paper(Path("t.json"))(tmp_path).splitlines()
    assert len(lines) == 3  # header, rule, one task
    # the paper's RTE: 52.7 without fine-tuning, 52.7 from random init, 64.6 pre-trained
    assert lines[2] == (
        "| rte (277) | 50.0 [40.0, 60.0] / 52.7 | 51.0 [40.0, 60.0] / 52.7 | "
        "52.0 [40.0, 60.0] / 64.6 | 53.0 |"
    )
