"""No doc names a file that is not there: every repository path and dotted module name in the
README, docs/**/*.md, and the comments and docstrings of pipeline/, stages/, benchmarks/ and
tests/ must exist in the checkout.

What counts as a path: text starting with a top-level folder of the repo (`pipeline/`,
`stages/`, `benchmarks/`, `tests/`, `conf/`, `docs/`, `data/`, `outputs/`, `.ci/`, `.dvc/`)
and not preceded by another path segment (so `../shared/data/...` and `<job folder>/models/`
are not), and dotted names `pipeline.<package>.<module>.<name>`, `stages.<name>`,
`benchmarks.<name>`. Placeholders are wildcards: `<task>`, `*` and an upper-case word such as
`TASK` match any name, `{a,b}` expands to each alternative. A Markdown link's target is
resolved from the folder of the file that holds it (and its text is not scanned); an anchor
`#heading` must be a heading of the file it points to.

Paths under outputs/ and data/ are made at run time, so they pass when they exist in the
checkout, or when they fall inside (or lead to) an output that dvc.yaml declares, its `${...}`
parts matching any name; a few run-time files that DVC does not track (RUNTIME) pass too.

A dotted name passes when its longest module prefix is a module or package of the checkout
and the next part, if any, is a top-level name (def, class, assignment, import) of that module.
"""

from __future__ import annotations

import ast
import glob
import io
import re
import tokenize
from pathlib import Path

import yaml

from tests.support.paths import REPO

# Written at run time outside DVC's outputs: stage wall times, resumable fine-tuning
# checkpoints (deleted when the stage finishes), the label sheets patterns_sample renders, the
# labels the annotation page appends (absent until someone labels), and the claim x model
# table that pipeline.claims.across_models builds from experiments.
RUNTIME = re.compile(
    r"outputs/(timings|checkpoints|labelling|(plots|figures)/across_models)(/.*)?"
    r"|data/annotations/[\w.-]+/human\.csv"
)
PLACEHOLDER = re.compile(r"<[^>]*>|\*+|\b(?!README\b)[A-Z][A-Z_]+\b")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s#]*)(#[^)\s]*)?\)")

TOP = r"(?:pipeline|stages|benchmarks|tests|conf|docs|data|outputs|\.ci|\.dvc)"
PATH = re.compile(rf"(?<![\w./<>-]){TOP}/[\w./<>{{}},*-]*")
DOTTED = re.compile(r"(?<![\w./-])(?:pipeline|stages|benchmarks)(?:\.[A-Za-z_]\w*)+")


def markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted(REPO.glob("docs/**/*.md"))]


def python_files() -> list[Path]:
    return sorted(
        p
        for top in ("pipeline", "stages", "benchmarks", "tests")
        for p in (REPO / top).rglob("*.py")
    )


def python_prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text()
    pieces = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                pieces.append((node.body[0].lineno, doc))
    return pieces


def mentions(text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """(line, name) of every path and dotted name in `text`."""
    found = []
    for pattern in (PATH, DOTTED):
        for match in pattern.finditer(text):
            name = match.group(0).rstrip(".,;:")
            if name.count("{") != name.count("}") or name.count("<") != name.count(">"):
                name = re.split(r"[{<]", name)[0]  # cut at a placeholder left open
            line = first_line + text.count("\n", 0, match.start())
            found.append((line, name))
    return found


def expand(path: str) -> list[str]:
    """`a/{b,c}.csv` -> [`a/b.csv`, `a/c.csv`]."""
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    return [
        expanded
        for option in match.group(1).split(",")
        for expanded in expand(path[: match.start()] + option + path[match.end() :])
    ]


def dvc_outputs() -> list[str]:
    """Every out, metric and plot path of dvc.yaml as a regex, `${...}` matching any name."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    paths = []
    for stage in stages.values():
        for key in ("outs", "metrics", "plots"):
            for entry in stage.get(key, []):
                paths.append(next(iter(entry)) if isinstance(entry, dict) else entry)
    return [
        "".join(
            r"[\w.-]*" if p.startswith("${") else re.escape(p)
            for p in re.split(r"(\$\{[^}]*\})", path)
        )
        for path in paths
    ]


DVC_OUTPUTS = dvc_outputs()


def run_time_path_exists(path: str) -> bool:
    """Inside, equal to, or a folder leading to an output that dvc.yaml declares (a placeholder
    of the doc may also stand for several folders: `outputs/plots/<parts>.csv`)."""
    concrete = PLACEHOLDER.sub("x", path).rstrip("/")
    if RUNTIME.fullmatch(concrete):
        return True
    spanning = "".join(
        r"[\w.-]+(/[\w.-]+)*" if PLACEHOLDER.fullmatch(p) else re.escape(p)
        for p in re.split(f"({PLACEHOLDER.pattern})", path.rstrip("/"))
        if p
    )
    last = concrete.rsplit("/", 1)[-1]
    for output in DVC_OUTPUTS:
        segments = output.split("/")
        if re.fullmatch(output, concrete) or re.match(output + "/", concrete):
            return True
        if any(re.fullmatch("/".join(segments[:n]), concrete) for n in range(1, len(segments))):
            return True
        sample = re.sub(r"\[\\w\.-\]\*", "x", output).replace("\\", "")
        if re.fullmatch(spanning, sample) or re.fullmatch(spanning, f"{sample}/{last}"):
            return True
    return False


def path_exists(path: str) -> bool:
    path = path.rstrip("/")
    for option in expand(path):
        pattern = PLACEHOLDER.sub("*", option)
        if glob.glob(str(REPO / pattern), recursive=True):
            continue
        if option.startswith(("outputs/", "data/")) and run_time_path_exists(option):
            continue
        return False
    return True


def anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", doc.read_text(), flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def top_level_names(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def dotted_exists(name: str) -> bool:
    parts = name.split(".")
    here = REPO / parts[0]
    for i, part in enumerate(parts[1:], start=1):
        if (here / part).is_dir():
            here = here / part
        elif (here / f"{part}.py").is_file():
            module = here / f"{part}.py"
            return i + 1 == len(parts) or parts[i + 1] in top_level_names(module)
        else:
            init = here / "__init__.py"
            return init.is_file() and part in top_level_names(init)
    return here.is_dir()


def exists(name: str) -> bool:
    return path_exists(name) if "/" in name else dotted_exists(name)


def missing_names() -> list[str]:
    missing = []
    for doc in markdown_files():
        text = doc.read_text()
        for link in LINK.finditer(text):
            target, anchor = link.group(1), link.group(2)
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (doc.parent / target).resolve() if target else doc
            line = 1 + text.count("\n", 0, link.start())
            if not resolved.exists():
                missing.append(f"{doc.relative_to(REPO)}:{line}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor[1:] not in anchors(resolved):
                missing.append(f"{doc.relative_to(REPO)}:{line}: {target}{anchor}")
        # a link's target is checked above, relative to the file; its text may name the target
        # the same way, so links are left out of the path scan
        text = LINK.sub(lambda m: " " * len(m.group(0)), text)
        for line, name in mentions(text):
            if not exists(name):
                missing.append(f"{doc.relative_to(REPO)}:{line}: {name}")
    for source in python_files():
        for first_line, text in python_prose(source):
            for line, name in mentions(text, first_line):
                if not exists(name):
                    missing.append(f"{source.relative_to(REPO)}:{line}: {name}")
    return missing


def test_every_named_path_exists():
    missing = missing_names()
    assert not missing, "named but not in the checkout:\n" + "\n".join(missing)


def test_the_checks_tell_present_from_absent():
    assert exists("pipeline/core/stats.py") and not exists("pipeline/core/no_such_file.py")
    assert exists("conf/task/<task>.yaml") and not exists("conf/no_such_group/<x>.yaml")
    assert exists("pipeline.core.io.save_figure") and not exists("pipeline.io.save_figure")
    assert exists("stages.analyze") and not exists("stages.no_such_stage")
    assert exists("outputs/plots/ablate/<task>/seed<seed>/heads.csv")  # inside a DVC output
    assert exists("outputs/attention/<task>/seed<seed>.parquet")
    assert exists("outputs/metrics/claims.json")
    assert not exists("outputs/no_such_stage/<task>.json")
    assert exists("outputs/plots/clark_heads/<task>/seed<seed>/{targets,entropy}.csv")
    assert not exists("pipeline/core/{stats,no_such_module}.py")
    assert exists("conf/task/TASK.yaml")
    assert exists("outputs/plots/<parts>.csv")  # a placeholder spanning folders
    assert exists("outputs/timings/<stage>/<task>.json")  # RUNTIME
    assert "the-claims-table" in anchors(REPO / "README.md")
    assert mentions("see ../shared/data/glue_data and <job folder>/models/x") == []
