"""Measured numbers in the docs, generated from the outputs and never typed by hand: the
claims table as Markdown (`results_markdown`, written by the claims stage), and the blocks
between `<!-- results:NAME -->` and `<!-- /results:NAME -->` markers in README.md and
docs/**/*.md. Each analysis declares its blocks (`BLOCKS` of pipeline/analyses/<name>/blocks.py,
found by scanning the analyses: `blocks()`), each naming the Markdown file that holds it and
how its text is made from output files, read as typed results where a stage writes them;
`python -m pipeline.claims.prose` rewrites every block, and
tests/project/test_readme_results.py fails when a block differs from what its outputs give."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline import analyses
from pipeline.claims.evaluate import PAPERS_EFFECT
from pipeline.claims.readings import shown_with
from pipeline.claims.sensitivity import threshold_sensitivity
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


def _number(value: float, digits: int = 3) -> str:
    return "" if pd.isna(value) else f"{value:.{digits}f}"


def _estimate(row: pd.Series) -> str:
    if pd.isna(row["estimate"]):
        return "undefined"
    return f"{row['estimate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def _effect(row: pd.Series) -> str:
    """The power check's effect and whose it is: the paper's printed number, or assumed."""
    effect = row.get("power_effect")
    if effect is None or pd.isna(effect):
        return ""
    source = str(row.get("power_effect_source"))
    whose = "paper" if source == PAPERS_EFFECT else source.split(":")[0]
    return f"{effect:.3f} ({whose})"  # paper, assumed, or this project's margin


def _verdict(row: pd.Series) -> str:
    """The verdict, with its reason where it has one and the interval's note (e.g. how many
    heads changed no prediction)."""
    verdict = f"**{row['verdict']}**" if row["verdict"] == "contradicted" else row["verdict"]
    said = [row.get(k) for k in ("reason", "note")]  # a note may be the reason itself
    said = [text for text in dict.fromkeys(said) if isinstance(text, str) and text]
    return f"{verdict} ({'; '.join(said)})" if said else verdict


def _seeds(row: pd.Series) -> str:
    if pd.isna(row["seeds"]):
        return "pre-trained"
    return f"{int(row['seeds_same_verdict'])} of {int(row['seeds'])}"


def results_markdown(table: pd.DataFrame) -> str:
    """Counts per verdict, then one Markdown table for the papers' claims and one for the
    extensions: claim, the paper's number, the effect the power check looked for (the
    paper's, or assumed: its source is in the reason), this run's estimate [95% CI], verdict
    (with its
    reason), threshold sensitivity (verdict at half / double), seeds agreeing; first, the
    claims registry the verdicts were judged by, where the table names one."""
    lines = []
    if "registry_digest" in table and len(table):
        first = table.iloc[0]
        lines += [
            f"Judged by claims registry version {int(first['registry_version'])} "
            f"({first['registry_status']}), digest `{first['registry_digest']}`: every "
            f"verdict is {first['registration']}.",
            "",
        ]
    for kind, title in (("paper", "The papers' findings"), ("extension", "Extensions")):
        counted = table[table["kind"] == kind]
        counts = counted["verdict"].value_counts()
        tally = ", ".join(f"{n} {v}" for v, n in counts.items())
        rows = shown_with(table, kind)
        lines += [
            f"{title} ({len(counted)}: {tally}; a finding read two ways is followed by its "
            "readings' rows):",
            "",
            "| claim | paper (bert-base) | effect for power | this run [95% CI] | verdict | "
            "at half / double threshold | seeds agreeing |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, row in rows.iterrows():
            sensitivity = threshold_sensitivity(
                row["threshold"], row["verdict_half_threshold"], row["verdict_double_threshold"]
            )
            lines.append(
                f"| `{row['claim']}` | {_number(row['paper_number'])} | {_effect(row)} | "
                f"{_estimate(row)} | {_verdict(row)} | {sensitivity} | {_seeds(row)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


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
