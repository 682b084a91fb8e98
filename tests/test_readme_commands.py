"""Every Python command the README and docs/**/*.md show runs: each entry point of their
```bash blocks and of their inline `python ...` spans (`python -m stages.<name>`,
`python -m benchmarks.<name>`, `python -m pipeline.core.params`) is started with `--help`,
after the flags that choose its mode (`--dvc`), from the repo root (`pytest -m slow`: a fresh
interpreter each).

Not run: `dvc ...` commands (they need a whole pipeline run, which `pytest -m slow` covers in
tests/test_end_to_end.py), `pip install` lines (they need the package index), `pytest` (this
suite), and `python -m venv` (it makes a virtual environment). `python -m pipeline.core.params`
has no `--help` (its arguments are overrides): it runs on its own, writing a params.yaml into
the scratch folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOT_RUN = ("venv",)  # python -m venv: makes a virtual environment
NO_HELP = ("pipeline.core.params",)  # arguments are Hydra overrides


DOCS = [REPO / "README.md", *sorted(REPO.glob("docs/**/*.md"))]


def readme_commands(text: str) -> list[str]:
    """The `python ...` commands of a Markdown file's ```bash blocks and inline code spans."""
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines()]
    spans = re.findall(r"`(python [^`]+)`", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    commands = [part.strip() for line in [*lines, *spans] for part in line.split("&&")]
    return [c.split("#")[0].strip() for c in commands if c.startswith("python ")]


def entry_point(command: str) -> tuple[str, ...]:
    """`python -m stages.analyze --dvc rte` -> ("-m", "stages.analyze", "--dvc");
    `python -c 'import stages'` -> ("-c", "import stages")."""
    words = command.split()[1:]
    if words[0] == "-m":
        return ("-m", words[1], *(["--dvc"] if "--dvc" in words else []))
    if words[0] == "-c":
        return ("-c", " ".join(words[1:]).strip("'\""))
    return (words[0],)  # a script path


ENTRY_POINTS = sorted(
    entry
    for entry in {
        entry_point(c)
        for doc in DOCS
        for c in readme_commands(doc.read_text())
        if "<" not in c  # stages.<name>: a placeholder, not a command
    }
    if entry[-1] not in NOT_RUN
)


def test_the_docs_show_stages_benchmarks_and_params() -> None:
    modules = {entry[1].split(".")[0] for entry in ENTRY_POINTS if entry[0] == "-m"}
    assert {"stages", "benchmarks", "pipeline"} <= modules
    assert ("-m", "stages.analyze", "--dvc") in ENTRY_POINTS


def test_every_entry_names_what_it_runs() -> None:
    """A module, a snippet of code or a script: never a bare flag, which would run as
    `python -c --help` (placeholders like `stages.<name>` are no command at all)."""
    for entry in ENTRY_POINTS:
        assert (entry[0] in ("-m", "-c") and len(entry) > 1) or entry[0].endswith(".py"), entry
        assert "<" not in " ".join(entry), entry
    assert entry_point("python -c 'import stages'") == ("-c", "import stages")


@pytest.mark.slow  # a fresh interpreter per command: about a minute in all
@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=" ".join)
def test_a_readme_command_starts(entry: tuple[str, ...], tmp_path: Path) -> None:
    """Run as a reader would: from the repo root, with only the installed packages on the path
    (`pipeline.core.params` from a scratch folder, since it writes params.yaml)."""
    writes = entry[-1] in NO_HELP
    args = list(entry) if writes or entry[0] == "-c" else [*entry, "--help"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path if writes else REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"python {' '.join(args)}:\n{result.stderr[-2000:]}"
    if writes:
        assert "seed_in_seeds: true" in (tmp_path / "params.yaml").read_text()
