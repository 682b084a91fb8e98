"""Every Python command the README and docs/**/*.md show is checked with its arguments:

- A command with concrete arguments that composes a config is composed by the project's own
  path, without running it (a run would take minutes to hours), so a misspelt key, value or
  task fails here: a stage as a Hydra app (`python -m stages.ablate key=value`, sweeps expanded),
  `python -m tools.params`, `python -m pipeline.scale`, and a stage under DVC
  (`--dvc TASK --seed SEED`: the task must be a task and the seed one of `seeds`).
- Every entry point (`python -m stages.<name>`, `python -m benchmarks.<name>`, ...) starts
  with `--help` after the flags that choose its mode (`--dvc`), from the repo root
  (`pytest -m slow`: a fresh interpreter each). A template (`<exp>`, `[--threads 2]`, `DIR`)
  is checked this way only.

Not run: `dvc ...` commands (they need a whole pipeline run, which `pytest -m slow` covers in
tests/stages/test_end_to_end.py), `pip install` lines (they need the package index), `pytest` (this
suite), and `python -m venv` (it makes a virtual environment). `python -m tools.params`
has no `--help` (its arguments are overrides): it runs on its own, writing a params.yaml into
the scratch folder.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException

import pipeline.scale.__main__ as scale_main
from pipeline.core.config import check_option
from pipeline.core.errors import PipelineError
from pipeline.core.overrides import check_overrides
from pipeline.core.stage import _dvc_args
from pipeline.scale.settings import load_config
from tests.support.builders import composed
from tests.support.paths import REPO
from tools.params import compose_params

NOT_RUN = ("venv",)  # python -m venv: makes a virtual environment
NO_HELP = ("tools.params",)  # arguments are Hydra overrides
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
    (`tools.params` from a scratch folder, since it writes params.yaml)."""
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


def is_template(command: str) -> bool:
    """A command shown with placeholders (`<exp>`, `[--threads 2]`, `...`, `DIR`, `MAPS.npz`)."""
    placeholder = re.compile(r"[A-Z][A-Z_]*(\.[a-z]+)?")
    return any(mark in command for mark in ("<", "...")) or any(
        word.startswith("[") or placeholder.fullmatch(word) for word in shlex.split(command)
    )


def is_hydra_stage(module: str) -> bool:
    path = REPO / Path(*module.split(".")).with_suffix(".py")
    return module.startswith("stages.") and "stage_main(" in path.read_text()


def composed_by(command: str) -> str | None:
    """What composes `command`'s config (None: it composes none, or it is a template)."""
    words = shlex.split(command)[1:]
    if is_template(command) or words[0] != "-m":
        return None
    module, args = words[1], words[2:]
    if module in ("tools.params", "pipeline.scale"):
        return module
    if is_hydra_stage(module):
        return "dvc stage" if args[:1] == ["--dvc"] else "hydra stage"
    return None


def compose_command(command: str) -> None:
    """Compose `command`'s config as the command would, without running it: raises on a
    misspelt key, value, task or config name."""
    args = shlex.split(command)[3:]  # after python -m <module>
    kind = composed_by(command)
    if kind == "tools.params":
        compose_params(args)
    elif kind == "pipeline.scale":
        parsed = scale_main._arguments(args)
        extra = [f"jobs={parsed.jobs}"] if parsed.jobs is not None else []
        extra += [f"executor={parsed.executor}"] if parsed.executor else []
        load_config(parsed.config, [*parsed.overrides, *extra])
    elif kind == "dvc stage":
        task, seed = _dvc_args(args)
        cfg = composed()
        if task is not None:
            check_option("task", task)
        assert seed is None or seed in cfg.seeds, f"seed {seed} is not in seeds {cfg.seeds}"
    elif kind == "hydra stage":
        overrides = [a for a in args if a not in ("-m", "--multirun")]
        check_overrides(args)
        swept = OverridesParser.create().parse_overrides(overrides)
        for values in itertools.product(
            *[
                [f"{o.key_or_group}={v}" for v in o.sweep_string_iterator()]
                if o.is_sweep_override()
                else [o.input_line]
                for o in swept
            ]
        ):
            compose_params(list(values))


COMPOSED = sorted(
    {c for doc in DOCS for c in readme_commands(doc.read_text()) if composed_by(c) is not None}
)


def test_the_docs_show_commands_of_every_composing_kind() -> None:
    assert {composed_by(c) for c in COMPOSED} == {
        "tools.params", "pipeline.scale", "dvc stage", "hydra stage",
    }  # fmt: skip


@pytest.mark.parametrize("command", COMPOSED)
def test_a_readme_command_composes_with_its_arguments(command: str) -> None:
    compose_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "python -m stages.ablate task=rte ablate.mdoe=zero",  # a misspelt key
        "python -m stages.ablate -m task=mrpc ablate.mode=uniform,zeor",  # a misspelt value
        "python -m stages.finetune -m task=sst2,mrcp",  # a misspelt task in a sweep
        "python -m tools.params experiment=micro model=tiny_albrt",
        "python -m pipeline.scale --config slurm slurm.partiton=gpu",
        "python -m stages.ablate --dvc rtee --seed 42",  # no such task
        "python -m stages.ablate --dvc rte --seed 7",  # not one of `seeds`
    ],
)
def test_a_misspelt_command_fails_to_compose(command: str) -> None:
    assert composed_by(command) is not None
    with pytest.raises((PipelineError, ConfigCompositionException, AssertionError)):
        compose_command(command)
