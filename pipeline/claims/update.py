"""Add or update a finding with one command: every step after writing an analysis's package,
in order, in the checkout it is run from.

    python -m pipeline.claims.update <analysis>            # run the steps
    python -m pipeline.claims.update <analysis> --dry-run  # print them

1. the generated config and DAG (the defaults list of conf/config.yaml, params.yaml,
   dvc.yaml and the files its generator writes beside it), so that a new group or stage is
   known to Hydra and DVC;
2. the analysis's stage, where it declares one (`dvc repro -s <analysis>`);
3. the refresh of the analysis's slice of the registry's fixture alone (refresh_fixture.py),
   which judges every claim on the run first, so a claim that fails stops the command
   before any fixture or ledger file changes;
4. the registry's draft entry with its digest (draft_entry.py);
5. the claims stage (`dvc repro -s claims`): it comes after the fixture and the draft because
   it measures every claim on the fixture for the registry's digest, and its table names the
   version that judged it;
6. the docs' generated blocks (prose.py);
7. the kept runs judged again with the current claims (reference.py, kept_run.py).

The first step that fails stops the command with one line naming it and the fix (its own
error is printed above that line). What is left by hand is the draft's reason in
pipeline/claims/amendments.yaml (docs/adding-an-analysis.md).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline import analyses
from pipeline.analyses import catalog
from pipeline.core.errors import PipelineError, exit_on_error

PYTHON = "python"  # a step's interpreter: the one running this command
# the kept runs judged again, each with the module that judges it and its model
KEPT_RUNS = (
    ("outputs/reference/standard", "pipeline.claims.reference", "minilm_l6"),
    ("outputs/reference/mpnet_quick", "pipeline.claims.kept_run", "mpnet_base"),
)


@dataclass(frozen=True)
class Step:
    """One step: what it does, in words; its command (run in the checkout); and the fix for
    its failure."""

    what: str
    command: tuple[str, ...]
    fix: str


def steps(analysis: str) -> list[Step]:
    """The steps that add or update `analysis`'s findings (module docstring)."""
    if analysis not in analyses.names():
        raise PipelineError(
            f"update: no analysis {analysis!r} under pipeline/analyses; write its package "
            "first (docs/adding-an-analysis.md)"
        )
    declared = catalog.analyses().get(analysis)
    generate = "fix the package's settings or declaration that the error above names"
    claims = Step(
        "the claims stage",
        ("dvc", "repro", "-s", "claims"),
        "fix the claim the error above names; its cases: pytest tests/claims/test_cases.py",
    )
    stage = [
        Step(
            f"the {analysis} stage",
            ("dvc", "repro", "-s", analysis),
            f"fix what the error above names (`dvc repro -s {analysis}` runs the stage alone)",
        )
    ]
    rejudge = "fix what the error above names in the kept run's claims files or the claims"
    return [
        Step("the defaults list", _module("pipeline.analyses.defaults_list"), generate),
        Step("params.yaml", _module("tools.params"), generate),
        Step("dvc.yaml", _module("pipeline.dag.dvc_yaml"), generate),
        *(stage if declared is not None and declared.stage is not None else []),
        Step(
            f"the fixture's {analysis} slice",
            _module("pipeline.claims.refresh_fixture", "outputs", analysis),
            "run the stage that writes the file the error above names",
        ),
        Step(
            "the registry's draft entry",
            _module("pipeline.claims.draft_entry"),
            "a key or file the fixture lacks comes with its stage's slice (`python -m "
            "pipeline.claims.refresh_fixture outputs <stage>`); a ledger error is fixed in "
            "pipeline/claims/amendments.yaml",
        ),
        claims,
        Step(
            "the docs' generated blocks",
            _module("pipeline.claims.prose"),
            "fix the block or the output file the error above names",
        ),
        *(
            Step(f"the claims of {folder}", _module(module, folder, "--model", model), rejudge)
            for folder, module, model in KEPT_RUNS
        ),
    ]


def _module(name: str, *args: str) -> tuple[str, ...]:
    return (PYTHON, "-m", name, *args)


def run_command(step: Step, root: Path) -> int:
    """Run `step`'s command in the checkout `root` (`python` as this interpreter); its exit
    status."""
    command = [sys.executable if part == PYTHON else part for part in step.command]
    return subprocess.run(command, cwd=root).returncode


def update(
    analysis: str,
    root: Path,
    run: Callable[[Step, Path], int] = run_command,
    planned: Sequence[Step] | None = None,
) -> None:
    """Run the steps (`steps(analysis)`, or `planned`) in order in `root` with `run`; the
    first that fails raises one line naming it and the fix."""
    todo = list(planned) if planned is not None else steps(analysis)
    for number, step in enumerate(todo, start=1):
        print(f"update {analysis}, step {number} of {len(todo)}: {step.what}", flush=True)
        status = run(step, root)
        if status != 0:
            raise PipelineError(
                f"update {analysis}: step {number} ({step.what}: `{shlex.join(step.command)}`) "
                f"failed with status {status}; {step.fix}, then rerun the command"
            )
    print(
        f"update {analysis}: done; write the reason of the draft version in "
        "pipeline/claims/amendments.yaml"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.update", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("analysis", help="the analysis package's name")
    parser.add_argument("--dry-run", action="store_true", help="print the steps, run none")
    args = parser.parse_args(argv)
    with exit_on_error():
        if args.dry_run:
            for number, step in enumerate(steps(args.analysis), start=1):
                print(f"{number}. {step.what}: {shlex.join(step.command)}")
            return
        update(args.analysis, Path.cwd())


if __name__ == "__main__":
    main()
