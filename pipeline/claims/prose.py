"""Measured numbers in the docs, generated from the outputs and never typed by hand: the
blocks between `<!-- results:NAME -->` and `<!-- /results:NAME -->` markers in README.md and
docs/**/*.md. Each analysis declares its blocks (`BLOCKS` of pipeline/analyses/<name>/blocks.py,
found by scanning the analyses: `blocks()`), each naming the Markdown file that holds it and
how its text is made from output files, read as typed results where a stage writes them;
`python -m pipeline.claims.prose` rewrites every block, and
tests/project/test_readme_results.py fails when a block differs from what its outputs give.
(The claims table's own Markdown, results.md, is table_markdown.py's: the claims stage
writes it and reads no doc block.)"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline import analyses
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_text

# the kept runs whose files blocks quote (outputs/reference/<profile>/, README.md there)
STANDARD = Path("outputs/reference/standard")  # the standard reference, in its own layout
MPNET_QUICK = Path("outputs/reference/mpnet_quick")  # the MPNet run, in the outputs' layout


@dataclass(frozen=True)
class Block:
    """A generated block: the Markdown file that holds it (relative to the checkout), the
    output files it is made from, and `render(root) -> text` (by default a verbatim copy
    of its one source)."""

    doc: Path
    sources: tuple[Path, ...]
    render: Callable[[Path], str] | None = None

    def text(self, root: Path) -> str:
        """The block's text, ending in a newline so that the closing marker keeps its line."""
        text = self.render(root) if self.render else (root / self.sources[0]).read_text()
        return text if text.endswith("\n") else text + "\n"


def bullet_lines(path: Path) -> Callable[[Path], str]:
    """A text file's lines as a Markdown list."""
    return lambda root: "".join(f"- {line}\n" for line in (root / path).read_text().splitlines())


def blocks() -> dict[str, Block]:
    """Every analysis's blocks (`BLOCKS` of its blocks module), by marker name; a name two
    analyses declare fails in one line."""
    found: dict[str, Block] = {}
    for name in analyses.names():
        module = analyses.part(name, "blocks")
        for marker, block in (module.BLOCKS if module else {}).items():
            if marker in found:
                raise PipelineError(
                    f"doc block {marker} is declared twice (again by analysis {name}); rename one"
                )
            found[marker] = block
    return found


def marked(name: str) -> re.Pattern[str]:
    """The block between `<!-- results:NAME -->` and `<!-- /results:NAME -->`."""
    return re.compile(rf"(<!-- results:{name} -->\n)(.*?)(<!-- /results:{name} -->)", re.S)


MARKER = re.compile(r"<!-- results:([\w-]+) -->")


def with_results(text: str, doc: Path, root: Path) -> str:
    """`text` (the Markdown file `doc`) with every block that `doc` holds regenerated from
    the outputs under `root`. A marker of a block that lives elsewhere, or of no block, fails."""
    declared = blocks()
    for name in MARKER.findall(text):
        if name not in declared:
            raise PipelineError(
                f"{doc} has a `<!-- results:{name} -->` block that no generator makes"
            )
        if declared[name].doc != doc:
            raise PipelineError(f"{doc}: the {name} block belongs in {declared[name].doc}")
    for name, block in declared.items():
        if block.doc != doc:
            continue
        pattern = marked(name)
        if not pattern.search(text):
            raise PipelineError(f"{doc} has no `<!-- results:{name} -->` block; add one")
        generated = block.text(root)
        text = pattern.sub(lambda m, t=generated: m.group(1) + t + m.group(3), text)
    return text


def main(root: Path) -> None:
    for doc in sorted({block.doc for block in blocks().values()}):
        write_text(root / doc, with_results((root / doc).read_text(), doc, root))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Rewrite the generated blocks of README.md and docs/ from the outputs."
    )
    parser.add_argument("root", nargs="?", type=Path, default=Path.cwd(), help="the checkout")
    main(parser.parse_args().root)
    for name, block in blocks().items():
        print(f"{block.doc}: {name} block from", ", ".join(map(str, block.sources)))
