"""Numbers in the README and docs/ come from the outputs: every `<!-- results:NAME -->` block
holds exactly what its generator makes from the output files (pipeline/claims/prose.py),
wherever the block lives (the seed-interval coverage file is checked in
tests/claims/test_coverage.py).

Docs and outputs are both read from git's HEAD (pipeline/report/committed.py), never from
the workspace: a rerun on another CPU writes other last bits into the workspace's outputs,
while the docs hold the committed run's. A doc or output that HEAD does not hold, or a
checkout without git, skips its check and says why."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from pipeline.analyses.table1.blocks import table1_beside_paper
from pipeline.claims.prose import MARKER, blocks, marked, with_results
from pipeline.core.errors import PipelineError
from pipeline.report.committed import NoCommit, extract, untracked
from tests.support.paths import REPO

RESULTS = blocks()  # every analysis's doc blocks, by marker name
MARKDOWN = [Path("README.md"), *sorted(p.relative_to(REPO) for p in REPO.glob("docs/**/*.md"))]
SOURCES = sorted({source for block in RESULTS.values() for source in block.sources})


def committed_checkout(repo: Path, into: Path) -> tuple[Path, set[Path]]:
    """HEAD's copy of the docs and the blocks' sources under `into`, and those HEAD lacks."""
    wanted = sorted({*MARKDOWN, *(block.doc for block in RESULTS.values()), *SOURCES})
    missing = set(untracked(repo, wanted))
    extract(repo, [p for p in wanted if p not in missing], into)
    return into, missing


def block_difference(name: str, root: Path) -> str:
    """Why block `name` of the doc under `root` is not what its outputs under `root` give;
    empty when it is."""
    block = RESULTS[name]
    found = marked(name).search((root / block.doc).read_text())
    if not found:
        return f"{block.doc} lost its `<!-- results:{name} -->` block"
    if found.group(2) != block.text(root):
        return (
            f"{block.doc}'s {name} block differs from {', '.join(map(str, block.sources))}: "
            "run `python -m pipeline.claims.prose` and commit the docs with the outputs"
        )
    return ""


def stale_blocks(repo: Path, into: Path) -> list[str]:
    """The blocks whose committed doc differs from what the committed outputs give."""
    root, missing = committed_checkout(repo, into)
    return [
        name
        for name, block in RESULTS.items()
        if not missing & {block.doc, *block.sources} and block_difference(name, root)
    ]


@pytest.fixture(scope="module")
def committed(tmp_path_factory) -> tuple[Path, set[Path]]:
    try:
        return committed_checkout(REPO, tmp_path_factory.mktemp("committed"))
    except NoCommit as error:
        pytest.skip(f"docs not checked against the committed outputs: {error}")


def _skip_uncommitted(paths: set[Path], missing: set[Path]) -> None:
    if paths & missing:
        listed = ", ".join(map(str, sorted(paths & missing)))
        pytest.skip(f"HEAD does not hold {listed}: checked once committed")


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_each_committed_block_holds_what_the_committed_outputs_give(name, committed):
    root, missing = committed
    _skip_uncommitted({RESULTS[name].doc, *RESULTS[name].sources}, missing)
    difference = block_difference(name, root)
    assert not difference, difference


@pytest.mark.parametrize("doc", MARKDOWN, ids=str)
def test_rewriting_a_committed_doc_changes_nothing(doc, committed):
    """Also fails on a marker that no generator knows or that sits in the wrong file."""
    root, missing = committed
    held = {s for block in RESULTS.values() if block.doc == doc for s in block.sources}
    _skip_uncommitted({doc, *held}, missing)
    text = (root / doc).read_text()
    assert with_results(text, doc, root) == text


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         *args],
        check=True, capture_output=True,
    )  # fmt: skip


PERTURBED = "quick-claims-summary"  # a block that copies its output's digits verbatim


@pytest.fixture
def clone(tmp_path, committed) -> Path:
    """A clone of HEAD, its workspace checked out."""
    repo = tmp_path / "clone"
    _git(REPO, "clone", "--quiet", "--shared", str(REPO), str(repo))
    return repo


def _last_digit_nudged(path: Path) -> None:
    """`path` with its last digit changed, as another CPU's rerun would leave it."""
    text = path.read_text()
    last = [m.start() for m in re.finditer(r"\d", text)][-1]
    path.write_text(text[:last] + str((int(text[last]) + 1) % 10) + text[last + 1 :])


def test_a_rerun_differing_in_the_last_digit_keeps_the_docs_check_green(clone, tmp_path):
    source = clone / RESULTS[PERTURBED].sources[0]
    _last_digit_nudged(source)
    doc = (clone / RESULTS[PERTURBED].doc).read_text()
    assert with_results(doc, RESULTS[PERTURBED].doc, clone) != doc  # the workspace's differs
    assert stale_blocks(clone, tmp_path / "check") == []


def test_a_committed_output_the_committed_doc_disagrees_with_fails(clone, tmp_path):
    source = RESULTS[PERTURBED].sources[0]
    _last_digit_nudged(clone / source)
    _git(clone, "commit", "--quiet", "-m", "nudged", "--", source.as_posix())
    assert stale_blocks(clone, tmp_path / "check") == [PERTURBED]


def test_a_committed_doc_that_disagrees_with_the_committed_outputs_fails(clone, tmp_path):
    doc = RESULTS[PERTURBED].doc
    text = (clone / doc).read_text()
    found = marked(PERTURBED).search(text)
    (clone / doc).write_text(text[: found.start(2)] + "edited by hand\n" + text[found.end(2) :])
    _git(clone, "commit", "--quiet", "-m", "edited", "--", doc.as_posix())
    assert stale_blocks(clone, tmp_path / "check") == [PERTURBED]


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
