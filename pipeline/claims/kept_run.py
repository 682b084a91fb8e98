"""Re-judge a kept whole run (a reference folder in the outputs' layout: metrics/, plots/,
figures/) with the current claims, keeping the verdicts it was registered with beside them.

A run made after a registry version was frozen got `registered` verdicts. When the claims
change after its results were seen, its new verdicts are `fitted`, and the registered ones
stay the evidence: the rewritten table keeps each claim's earlier verdict in
`registered_verdict` with the version in `registered_version` (empty for a claim added
since), and the headline says how many differ. A claim on the results of a stage the kept
run never ran (a stage added since) is not testable, and says so.

    python -m pipeline.claims.kept_run outputs/reference/mpnet_quick --model mpnet_base
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from pipeline.claims.claim import Claim
from pipeline.claims.evaluate import all_claims, evaluate
from pipeline.claims.judge import ClaimsFiles, claims_files
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.reference import RENAMED
from pipeline.claims.registry import registration, registry_digest
from pipeline.claims.rules import Estimate, undefined
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import write_results

TASK_ORDER = ("sst2", "mrpc", "rte", "stsb")  # the claims stage's order of the default tasks


def kept_tasks(root: Path) -> list[str]:
    """The tasks of the run's Table 1 (seed 42's), in the claims stage's order."""
    table1 = root / "metrics" / "table1" / "seed42.json"
    if not table1.exists():
        raise PipelineError(f"{table1} is missing: not a kept whole run")
    found = {k.split(".")[0] for k in json.loads(table1.read_text()) if k.endswith(".examples")}
    return [t for t in TASK_ORDER if t in found] + sorted(found - set(TASK_ORDER))


class NotRun(PipelineError):
    """The kept run has no results of a stage at all: it predates the stage."""


class KeptRunOutputs(StageOutputs):
    """A kept whole run's results; reading a stage it never ran raises `NotRun`."""

    def _ran(self, stage: str) -> None:
        if stage not in stages_written(self.root):
            raise NotRun(f"the kept run predates stage {stage}: it holds none of its results")

    def _flat(self, stage: str, where: tuple[str, ...]) -> tuple[Mapping, str]:
        self._ran(stage)
        return super()._flat(stage, where)

    def _csv(self, stage: str, where: tuple[str, ...], name: str) -> tuple[pd.DataFrame, str]:
        self._ran(stage)
        return super()._csv(stage, where, name)


def stages_written(root: Path) -> set[str]:
    """The stages with results in the run at `root`: its metrics/ and plots/ folders'
    entries, by name (`<stage>.json` or `<stage>/`)."""
    kinds = [root / "metrics", root / "plots"]
    return {Path(entry.name).stem for kind in kinds if kind.is_dir() for entry in kind.iterdir()}


def measured_if_run(claim: Claim) -> Claim:
    """`claim`, undefined (so not testable, with the reason) where the kept run never ran a
    stage it reads."""

    def measure(out: StageOutputs, seed: int) -> Estimate:
        try:
            return claim.measure(out, seed)
        except NotRun as why:
            return undefined(str(why))

    return replace(claim, measure=measure)


def registered_beside(table: pd.DataFrame, earlier: pd.DataFrame) -> pd.DataFrame:
    """`table` with the earlier table's registered verdicts beside each claim (by its
    current id or the id it had, `reference.RENAMED`): its own where it was registered, or
    those it already kept beside its fitted ones, so that judging a run again loses none."""
    registered = earlier[earlier["registration"] == "registered"]
    verdicts = dict(zip(registered["claim"], registered["verdict"], strict=True))
    versions = dict(zip(registered["claim"], registered["registry_version"], strict=True))
    if "registered_verdict" in earlier:  # judged again before: its kept verdicts carry over
        kept = earlier[earlier["registered_verdict"].fillna("") != ""]
        verdicts |= dict(zip(kept["claim"], kept["registered_verdict"], strict=True))
        versions |= dict(zip(kept["claim"], kept["registered_version"], strict=True))
    ids = table["claim"].map(lambda c: c if c in verdicts else RENAMED.get(c, c))
    return table.assign(
        registered_verdict=ids.map(verdicts).fillna(""),
        registered_version=ids.map(versions),
    )


def differing(table: pd.DataFrame) -> str:
    """The headline's sentence on the registered verdicts kept beside the fitted ones."""
    kept = table[table["registered_verdict"] != ""]
    if kept.empty:
        return ""
    changed = kept[kept["verdict"] != kept["registered_verdict"]]
    version = int(kept["registered_version"].iloc[0])
    return (
        f" The verdicts registered by version {version}, before the claims changed with "
        f"this model's results in view, stand beside these in `registered_verdict`: "
        f"{len(changed)} of {len(kept)} differ."
    )


def rejudge_run(root: Path, model: str) -> ClaimsFiles:
    """Judge the kept run at `root` again and rewrite its claims files in place."""
    earlier = pd.read_csv(root / "plots" / "claims" / "claims.csv")
    out = KeptRunOutputs(root)
    claims = [measured_if_run(claim) for claim in all_claims(out, kept_tasks(root))]
    files = claims_files(*evaluate(claims, out, [42]), registration(registry_digest(), model))
    table = registered_beside(files.tables["claims"], earlier)
    texts = files.texts | {"summary.txt": files.texts["summary.txt"] + differing(table)}
    write_results(
        root / "plots" / "claims",
        root / "figures" / "claims",
        root / "metrics" / "claims.json",
        tables=files.tables | {"claims": table},
        figures=files.figures,
        metrics=files.metrics,
        texts=texts,
    )
    return files._replace(tables=files.tables | {"claims": table}, texts=texts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.kept_run",
        description="Judge a kept whole run's outputs again with the current claims.",
    )
    parser.add_argument("root", type=Path, help="e.g. outputs/reference/mpnet_quick")
    parser.add_argument("--model", required=True, help="the run's model.name")
    args = parser.parse_args(argv)
    with exit_on_error():
        files = rejudge_run(args.root, args.model)
    print(files.texts["summary.txt"])


if __name__ == "__main__":
    main()
