"""Re-judge a kept reference run with the current claims and rules.

A reference folder (outputs/reference/<profile>/, README.md there) keeps what a whole run's
claims stage read and wrote, not every stage's outputs: the per-seed measurements
(`claims_by_seed.csv`: seed, claim, estimate, interval), each seed's Table 1
(`table1/seed<N>.json`, which the validity gate reads) and the pattern classifier's scores
and shares. This module judges those kept measurements again with the current claims
registry, rules and thresholds, and rewrites the folder's claims files (`claims.csv`,
`claims_by_seed.csv`, `claims.json`, `summary.txt`, `results.md`, `forest.png`).

What it reads, and from where:
- the numbers (estimate and interval per claim and seed): the kept `claims_by_seed.csv`;
- the gate: the kept Table 1 files; a removal or pruning claim's room above chance on the
  ablation rows needs the ablation baseline, which a reference folder keeps only if its run
  wrote it (`ablate/<task>/seed<N>.json`, `plots/ablate/...`): without it the claim is not
  testable, and says so;
- the claims' definitions and the row counts behind the power check: the kept files where
  they hold them, else the checkout's own outputs for what depends on the data and the
  pre-trained model alone (`SHARED`: the dev-set sizes, the syntax, coreference and
  FrameNet stages), never for a fine-tuned model's files;
- a claim the run did not measure (added since) is not testable, and says so;
- a claim whose statistic changed since (`REMEASURED`) is measured again from the kept
  inputs where they allow it.

    python -m pipeline.claims.reference outputs/reference/standard
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from pipeline.claims.claim import Claim
from pipeline.claims.evaluate import (
    all_claims,
    dev_rows,
    evaluate_claim,
    gate_failures,
    table_frames,
)
from pipeline.claims.judge import claims_files, write_into
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.registry import registration, registry_digest
from pipeline.claims.rules import Estimate, undefined
from pipeline.core.errors import PipelineError, exit_on_error

SHARED = ("prepare", "clark_syntax", "clark_coref", "framenet")  # data and pre-trained model
BY_SEED = "claims_by_seed.csv"
# claims renamed since a kept run: new id -> the id the run wrote. The paper states a layer's
# removal helps on RTE alone, Michel et al. their BERT finding on MNLI-matched alone, Voita
# et al. theirs on a translation model: rows beyond those are extensions here.
PRUNE = "prune_40_percent_small_cost"
RENAMED = (
    {
        f"extension.layers_removal_helps.{task}": f"kovaleva.layers_removal_helps.{task}"
        for task in ("sst2", "mrpc", "stsb", "qqp", "qnli", "mnli")
    }
    | {
        f"extension.{PRUNE}.{task}": f"michel.{PRUNE}.{task}"
        for task in ("sst2", "mrpc", "rte", "stsb", "qqp", "qnli", "mnli")
    }
    | {"extension.most_heads_prunable": "voita.most_heads_prunable"}
    | {"extension.heterogeneous_minority.mrpc": "kovaleva.heterogeneous_minority.mrpc"}
)
# claims whose statistic changed since the kept runs (registry version 3) and whose inputs
# every kept folder holds (patterns_apply metrics, the cross-validated predictions, or a
# SHARED stage's): measured
# again from those inputs rather than read from the kept table; where the kept inputs no
# longer suffice (the share claims weigh their labelled maps by the run's maps per rule
# class, which runs before that was counted lack), not testable with the reason
REMEASURED = (
    "kovaleva.types_recur.",
    "kovaleva.first_three_types_large_part.",
    "extension.heterogeneous_minority.",
    "clark.no_head_does_syntax_overall",  # clark_syntax is SHARED: the checkout's
    # one row per model since registry version 9, pooled from each task's kept clark_heads
    # metrics (the middle layers' means are not kept: not testable, with the reason)
    "clark.sep_in_middle_layers",
    "clark.middle_layers_attend_to_sinks",
    "extension.same_layer_heads_alike",
)
NOT_MEASURED = (
    "the reference run kept no measurement of this claim (it was added after the run): "
    "rerun the profile"
)


class KeptOutputs(StageOutputs):
    """A reference folder's kept files in the stages' layout (`<folder>/<stage>/...json`),
    then the checkout's outputs for the stages in SHARED; anything else is missing."""

    def __init__(self, kept: Path, checkout_outputs: Path) -> None:
        super().__init__(checkout_outputs)
        self.kept = Path(kept)

    def _kept(self, parts: tuple[str, ...], suffix: str) -> Path:
        return self.kept.joinpath(*parts[:-1], f"{parts[-1]}{suffix}")

    def _flat(self, stage: str, where: tuple[str, ...]) -> tuple[Mapping, str]:
        parts = (stage, *where)
        path = self._kept(parts, ".json")
        if path.exists():
            return json.loads(path.read_text()), str(path)
        if stage in SHARED:
            return super()._flat(stage, where)
        raise PipelineError(f"the reference {self.kept} keeps no {'/'.join(parts)}.json")

    def _has_flat(self, stage: str, where: tuple[str, ...]) -> bool:
        if self._kept((stage, *where), ".json").exists():
            return True
        return stage in SHARED and super()._has_flat(stage, where)

    def _kept_csv(self, stage: str, where: tuple[str, ...], name: str) -> Path:
        return self.kept.joinpath("plots", stage, *where, f"{name}.csv")

    def _has_csv(self, stage: str, where: tuple[str, ...], name: str) -> bool:
        if self._kept_csv(stage, where, name).exists():
            return True
        return stage in SHARED and super()._has_csv(stage, where, name)

    def _csv(self, stage: str, where: tuple[str, ...], name: str) -> tuple[pd.DataFrame, str]:
        parts = (stage, *where, name)
        path = self._kept_csv(stage, where, name)
        if path.exists():
            return pd.read_csv(path), str(path)
        if stage in SHARED:
            return super()._csv(stage, where, name)
        raise PipelineError(f"the reference {self.kept} keeps no plots/{'/'.join(parts)}.csv")


def kept_measurement(claim: Claim, out: KeptOutputs, kept: pd.DataFrame, seed: int) -> Estimate:
    """The kept estimate and interval of `claim` on `seed`, with the critical value, row
    count and note that its measure gives where the kept files allow it to run."""
    names = (claim.name, RENAMED.get(claim.name, claim.name))
    found = kept[kept["claim"].isin(names) & (kept["seed"] == seed)]
    if found.empty or found["estimate"].isna().all():
        try:  # a statistic undefined by design says why itself; a remeasured one is new
            shape = claim.measure(out, seed)
        except PipelineError:
            return undefined(NOT_MEASURED)
        remeasured = claim.name.startswith(REMEASURED)
        return shape if shape.undefined or remeasured else undefined(NOT_MEASURED)
    row = found.iloc[0]
    numbers = (float(row["estimate"]), float(row["ci_low"]), float(row["ci_high"]))
    remeasured = claim.name.startswith(REMEASURED)  # the kept numbers are no longer its
    try:
        shape = claim.measure(out, seed)
    except PipelineError as missing:
        return undefined(f"{missing}; rerun the profile") if remeasured else Estimate(*numbers)
    if remeasured:
        return shape
    if shape.undefined:
        return Estimate(*numbers)
    return Estimate(
        *numbers,
        critical=shape.critical,
        note=shape.note,
        evidence=shape.evidence,
        unresolved=shape.unresolved,
    )


def kept_gate(claim: Claim, out: KeptOutputs, seed: int) -> str:
    """Why `seed` cannot be used, by the current gate on the kept files ('' when it can)."""
    try:
        return gate_failures(claim, out, seed)
    except PipelineError as missing:
        return (
            f"the room above chance on seed {seed}'s ablation rows cannot be checked "
            f"({missing}); rerun the profile"
        )


def rejudge(folder: Path, checkout_outputs: Path, model: str) -> pd.DataFrame:
    """Judge the kept measurements of `folder` again and rewrite its claims files."""
    by_seed_path = folder / BY_SEED
    if not by_seed_path.exists():
        raise PipelineError(f"{by_seed_path} is missing: not a kept reference run")
    kept = pd.read_csv(by_seed_path)
    seeds = list(dict.fromkeys(int(s) for s in kept["seed"]))  # the primary seed first
    out = KeptOutputs(folder, checkout_outputs)
    tables = sorted(folder.glob("table1/seed*.json"))
    if not tables:
        raise PipelineError(f"{folder}/table1/ is missing: the gate cannot be checked")
    tasks = sorted(
        {k.split(".")[0] for k in json.loads(tables[0].read_text()) if k.endswith(".examples")}
    )
    order = [t for t in ("sst2", "mrpc", "rte", "stsb") if t in tasks]
    tasks = order + [t for t in tasks if t not in order]
    rows, seed_rows = [], []
    claims = all_claims(out, tasks)
    for claim in claims:
        evaluated = seeds if claim.finetuned else seeds[:1]
        measured = {s: kept_measurement(claim, out, kept, s) for s in evaluated}
        gates = {s: kept_gate(claim, out, s) for s in evaluated}
        dev = dev_rows(out, claim)
        row, per_seed = evaluate_claim(claim, measured, gates, dev)
        rows.append(row)
        seed_rows += per_seed
    table, by_seed = table_frames(claims, rows, seed_rows)
    write_into(claims_files(table, by_seed, registration(registry_digest(), model)), folder)
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.reference",
        description="Judge a kept reference run's measurements again with the current claims.",
    )
    parser.add_argument("folder", type=Path, help="e.g. outputs/reference/standard")
    parser.add_argument("--outputs", type=Path, default=Path("outputs"), help="the checkout's")
    parser.add_argument("--model", default=None, help="default: params.yaml's model.name")
    args = parser.parse_args(argv)
    model = args.model or str(OmegaConf.load("params.yaml").model.name)
    with exit_on_error():
        table = rejudge(args.folder, args.outputs, model)
    print(f"{len(table)} claims judged again in {args.folder}")


if __name__ == "__main__":
    main()
