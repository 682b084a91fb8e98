"""Claims across models: one table of every claim x model, built from DVC experiments.

Each model is one DVC experiment (or any git revision) of this pipeline: one model's DAG per
run, its params and outputs recorded in the experiment's commit (docs/comparing-runs.md says
why experiments rather than a model axis in dvc.yaml). This module reads, for each given
experiment name or git revision, the claims table that the claims stage wrote there
(outputs/plots/claims/claims.csv, kept in git) and the model it ran (`model.name` of its
params.yaml), through DVC's API, and writes:

- outputs/plots/across_models/claims.csv: one row per claim (claim, kind, source, finding,
  statistic, paper_number), then per model `<model>.estimate`, `.ci_low`, `.ci_high`,
  `.verdict`, `.reason`, and `supported_on`: on how many of the real models (all but the
  `--control` runs) the claim is supported;
- outputs/plots/across_models/runs.csv: model, experiment, the commit it was read from,
  whether it is a control, and the claims registry that judged it (version, status, digest
  and the version's date in amendments.yaml; blank for a table written before the registry):
  the report marks a column judged by another registry than its claims section, with the
  command that refreshes the table (pipeline/report/across.py);
- outputs/plots/across_models/claims.md: the table to read, the paper's number once;
- outputs/plots/across_models/summary.txt: the verdict counts per model, in sentences;
- outputs/figures/across_models/verdicts.png: the verdicts as a claims x models grid.

The report stage depends on outputs/plots and outputs/figures whole, so `dvc repro`
redraws the report when this table changes; the commits in runs.csv say exactly which runs
the table holds.

    python -m pipeline.claims.across_models minilm mpnet tiny --control tiny
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.claims.registry import versions
from pipeline.claims.rules import VERDICTS
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import Captioned, save_figure, write_table, write_text

CLAIMS_CSV = "outputs/plots/claims/claims.csv"
TABLE_DIR = Path("plots") / "across_models"  # under the outputs folder
FIGURE = Path("figures") / "across_models" / "verdicts.png"
SHARED = ("claim", "kind", "source", "finding", "statistic", "paper_number")
PER_MODEL = ("estimate", "ci_low", "ci_high", "verdict", "reason")
COLOURS = {"supported": "#7fbf7f", "contradicted": "#e07b7b", "inconclusive": "#d9d9d9",
           "underpowered": "#f2c46d", "not testable": "#a9a9d9",
           "seed-dependent": "#d8a8d8", "reading-dependent": "#9fd0de"}  # fmt: skip


# What a reader must know before comparing models with the papers (in the summary and table).
CAVEATS = (
    "Two caveats. The real models here are contrastive sentence encoders (all-MiniLM-L6-v2, "
    "all-mpnet-base-v2: masked-LM checkpoints trained further on sentence pairs), so their "
    "'pre-trained' maps are not a masked-LM checkpoint's, as bert-base's were in the papers. "
    "And claims that name layers read them from the top: 'the last two layers' are layers "
    "5-6 of a 6-layer model (a third of its depth) and 11-12 of a 12-layer one (a sixth, as in "
    "bert-base)."
)


@dataclass(frozen=True)
class ModelRun:
    """One experiment's claims: the name it was asked by, its commit, model and table;
    `control`: a random model, a negative control rather than a model whose findings count."""

    name: str
    commit: str
    model: str
    claims: pd.DataFrame
    control: bool = False

    @property
    def heading(self) -> str:
        """The model's column heading: its name, how its verdicts were judged and by which
        registry version."""
        registry = self.registry
        version = f", registry v{registry['registry_version']}" if registry else ""
        if self.control:
            return f"{self.model} (random control{version})"
        if registry:
            return f"{self.model} ({self.claims['registration'].iloc[0]}{version})"
        return self.model

    @property
    def registry(self) -> dict[str, object]:
        """The claims registry that judged the run: version, status, digest and the
        version's date (amendments.yaml; blank where the digest is no recorded version's);
        empty for a table written before the registry."""
        if "registration" not in self.claims or self.claims.empty:
            return {}
        first = self.claims.iloc[0]
        dates = {v.digest: v.date.isoformat() for v in versions()}
        return {
            "registry_version": int(first["registry_version"]),
            "registry_status": str(first["registry_status"]),
            "registry_digest": str(first["registry_digest"]),
            "registry_date": dates.get(str(first["registry_digest"]), ""),
        }


def read_run(repo: Path, name: str) -> ModelRun:
    """The claims table and model of the experiment (or git revision) `name` in `repo`."""
    import dvc.api
    from dvc.exceptions import NotDvcRepoError, PathMissingError
    from dvc.repo import Repo
    from dvc.scm import RevError, resolve_rev

    try:
        with Repo(str(repo)) as dvc_repo:
            commit = resolve_rev(dvc_repo.scm, name)
    except NotDvcRepoError:
        raise PipelineError(f"{repo} is not a DVC repository: pass --repo") from None
    except RevError:
        raise PipelineError(
            f"no experiment or git revision named {name!r} in {repo}: "
            "`dvc exp list` shows the experiments"
        ) from None
    try:
        text = dvc.api.read(CLAIMS_CSV, repo=str(repo), rev=commit)
    except (PathMissingError, FileNotFoundError):
        raise PipelineError(
            f"experiment {name!r} has no {CLAIMS_CSV}: run the claims stage in it "
            "(`dvc exp run` runs the whole pipeline)"
        ) from None
    params = dvc.api.params_show(repo=str(repo), rev=commit, deps=False)
    model = params.get("model", {}).get("name")
    if not model:
        raise PipelineError(f"experiment {name!r} has no `model.name` in its params.yaml")
    return ModelRun(name, commit, model, pd.read_csv(io.StringIO(text)))


def check_models(runs: Sequence[ModelRun]) -> None:
    """One run per model: two runs of one model would be two columns of the same name."""
    seen: dict[str, str] = {}
    for run in runs:
        if run.model in seen:
            raise PipelineError(
                f"experiments {seen[run.model]!r} and {run.name!r} both ran model "
                f"{run.model!r}: give one experiment per model"
            )
        seen[run.model] = run.name


def across_models(runs: Sequence[ModelRun]) -> pd.DataFrame:
    """One row per claim (in the order the runs list them; a claim one model's run lacks,
    e.g. of a task it did not run, is blank there): the claim's description and the paper's
    number once, then each model's estimate, interval, verdict and its reason."""
    check_models(runs)
    table = pd.concat([r.claims[list(SHARED)] for r in runs]).drop_duplicates("claim")
    for run in runs:
        own = run.claims.set_index("claim")[list(PER_MODEL)]
        own.columns = [f"{run.model}.{c}" for c in PER_MODEL]
        table = table.join(own, on="claim")
    supported = table[[f"{m}.verdict" for m in real_models(runs)]].eq("supported")
    table["supported_on"] = supported.sum(axis=1).astype(int)  # of the real models
    return table.reset_index(drop=True)


def real_models(runs: Sequence[ModelRun]) -> list[str]:
    """The models whose findings count: every run's but the controls'."""
    return [r.model for r in runs if not r.control]


def holding(table: pd.DataFrame, runs: Sequence[ModelRun]) -> str:
    """Which of the papers' findings are supported on every real model, on some, on none."""
    real = real_models(runs)
    papers = table[table["kind"] == "paper"]
    on = papers["supported_on"]
    every, some = papers[on == len(real)], papers[(on > 0) & (on < len(real))]
    if len(real) < 2:
        return f"{len(every)} of the papers' findings are supported on {real[0]}."
    named = ", ".join(f"`{c}`" for c in every["claim"]) or "none"
    return (
        f"Of {len(papers)} papers' findings, {len(every)} are supported on all {len(real)} "
        f"real models ({', '.join(real)}): {named}; {len(some)} on some of them; "
        f"{int((on == 0).sum())} on none."
    )


def runs_table(runs: Sequence[ModelRun]) -> pd.DataFrame:
    """One row per run: model, experiment, commit, whether a control, and its registry."""
    return pd.DataFrame(
        [
            {"model": r.model, "experiment": r.name, "commit": r.commit, "control": r.control}
            | r.registry
            for r in runs
        ]
    )


def _cell(row: pd.Series, model: str) -> str:
    """`0.233 [0.147, 0.310] supported`, blank where the model's run lacks the claim."""
    verdict = row[f"{model}.verdict"]
    if not isinstance(verdict, str):
        return ""
    estimate = row[f"{model}.estimate"]
    if pd.isna(estimate):
        return verdict
    low, high = row[f"{model}.ci_low"], row[f"{model}.ci_high"]
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}] {verdict}"


def markdown(table: pd.DataFrame, runs: Sequence[ModelRun]) -> str:
    """The table to read: claim, the paper's number (bert-base), then one column per model."""
    models = [r.model for r in runs]
    header = ["claim", "paper (bert-base)", *(r.heading for r in runs)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        number = "" if pd.isna(row["paper_number"]) else f"{row['paper_number']:.3f}"
        cells = [f"`{row['claim']}`", number, *(_cell(row, m) for m in models)]
        lines.append("| " + " | ".join(cells) + " |")
    sources = ", ".join(f"{r.model} from {r.name} ({r.commit[:7]})" for r in runs)
    return f"Claims across models: {sources}. {CAVEATS}\n\n" + "\n".join(lines) + "\n"


def judged(run: ModelRun) -> str:
    """Which claims registry judged a run and how ('fitted' or 'registered', registry.py);
    a table written before the registry says so."""
    claims = run.claims
    if "registration" not in claims or claims.empty:
        return "judged before the claims registry"
    registry = run.registry
    date = f", {registry['registry_date']}" if registry["registry_date"] else ""
    return (
        f"{claims['registration'].iloc[0]} by registry version {registry['registry_version']} "
        f"({registry['registry_status']}, {str(registry['registry_digest'])[:12]}{date})"
    )


def summary(table: pd.DataFrame, runs: Sequence[ModelRun]) -> str:
    """The verdict counts of the papers' findings per model, in sentences."""
    papers = table[table["kind"] == "paper"]
    parts = []
    for run in runs:
        counts = papers[f"{run.model}.verdict"].value_counts()
        tested = int(counts.sum())
        shown = ", ".join(f"{int(counts[v])} {v}" for v in VERDICTS if counts.get(v, 0))
        control = "; a random control" if run.control else ""
        parts.append(
            f"{run.model} ({run.name}, {run.commit[:7]}): {tested} ({shown}; {judged(run)}"
            f"{control})"
        )
    return (
        f"{len(papers)} findings of the papers across {len(runs)} models, one DVC experiment "
        f"each: {'; '.join(parts)}. {holding(table, runs)} The papers measured bert-base; "
        f"each model's numbers stand beside the papers', not against them. {CAVEATS}"
    )


def verdict_figure(table: pd.DataFrame, runs: Sequence[ModelRun]) -> Captioned:
    """The verdicts as a grid: one row per claim, one column per model, coloured by verdict."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    models = [r.model for r in runs]
    codes = {verdict: i for i, verdict in enumerate(VERDICTS)}
    grid = [[codes.get(v, math.nan) for v in table[f"{m}.verdict"]] for m in models]
    figure, ax = plt.subplots(figsize=(2.5 + 1.2 * len(models), 1 + 0.16 * len(table)))
    ax.imshow(
        list(zip(*grid, strict=True)),
        cmap=ListedColormap([COLOURS[v] for v in VERDICTS]),
        vmin=-0.5,
        vmax=len(VERDICTS) - 0.5,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_xticks(
        range(len(models)), [r.heading for r in runs], rotation=30, ha="right", fontsize=8
    )
    ax.set_yticks(range(len(table)), table["claim"], fontsize=6)
    ax.legend(
        handles=[Patch(color=COLOURS[v], label=v) for v in VERDICTS],
        loc="upper left",
        bbox_to_anchor=(1.02, 1),
        fontsize=7,
    )
    caption = (
        "The verdict of every claim (rows) on every model (columns), each model one DVC "
        "experiment; white where a model's run lacks the claim."
    )
    return Captioned(figure, caption, {"experiments": " ".join(r.name for r in runs)})


def write_outputs(outputs: Path, runs: Sequence[ModelRun]) -> pd.DataFrame:
    """Build the claim x model table from `runs` and write every file (each atomically)."""
    table = across_models(runs)
    folder = outputs / TABLE_DIR
    write_table(folder / "claims.csv", table)
    write_table(folder / "runs.csv", runs_table(runs))
    write_text(folder / "claims.md", markdown(table, runs))
    write_text(folder / "summary.txt", summary(table, runs))
    drawn = verdict_figure(table, runs)
    save_figure(outputs / FIGURE, drawn.figure, drawn.caption, drawn.config)
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.across_models",
        description="Collect the claims tables of DVC experiments (one per model) into one "
        "claim x model table under <outputs>/plots/across_models/.",
    )
    parser.add_argument("experiments", nargs="+", help="experiment names or git revisions")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="the DVC repository")
    parser.add_argument("--outputs", type=Path, default=None, help="default: <repo>/outputs")
    parser.add_argument(
        "--control",
        action="append",
        default=[],
        metavar="EXPERIMENT",
        help="an experiment of a random model: shown as a negative control, never counted "
        "among the models a finding holds on (repeatable)",
    )
    args = parser.parse_args(argv)
    with exit_on_error():
        unknown = set(args.control) - set(args.experiments)
        if unknown:
            raise PipelineError(f"--control {sorted(unknown)[0]} is not among the experiments")
        runs = [
            dataclasses.replace(read_run(args.repo, name), control=name in args.control)
            for name in args.experiments
        ]
        table = write_outputs(args.outputs or args.repo / "outputs", runs)
    print(f"{len(table)} claims x {len(runs)} models -> {args.outputs or args.repo / 'outputs'}")


if __name__ == "__main__":
    main()
