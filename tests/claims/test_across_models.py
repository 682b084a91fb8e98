"""Claims across models (pipeline/claims/across_models.py): in a toy DVC repo whose one stage
writes a planted claims table for its `model.name` param, two real `dvc exp run -S`
experiments are collected into the claim x model table; unknown names, an experiment
without a claims table and two experiments of one model each fail in one line."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from pipeline.claims.across_models import (
    ModelRun,
    judged,
    main,
    read_run,
    runs_table,
    write_outputs,
)
from pipeline.claims.registry import versions
from pipeline.core.errors import PipelineError
from pipeline.report.html import render_report
from tests.support.builders import drawn
from tests.support.repos import commit_repo, micro_git_repo, run_ok

# What the toy stage writes per model: claim -> (estimate, ci_low, ci_high, verdict).
PLANTED = {
    "alpha": {"k.one": (0.5, 0.2, 0.8, "supported"), "k.two": (0.0, -0.1, 0.1, "inconclusive")},
    "beta": {"k.one": (-0.4, -0.6, -0.2, "contradicted"), "k.two": (0.3, 0.1, 0.5, "supported")},
}
PAPER = {"k.one": 0.7, "k.two": None}
STAGE = f"""
import csv, pathlib, yaml
PLANTED, PAPER = {PLANTED!r}, {PAPER!r}
params = yaml.safe_load(open("params.yaml"))
out = pathlib.Path("outputs/plots/claims")
out.mkdir(parents=True, exist_ok=True)
name = "claims.csv" if params["write_claims"] else "other.csv"
with open(out / name, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["claim", "kind", "source", "finding", "statistic", "paper_number",
                "estimate", "ci_low", "ci_high", "verdict", "reason"])
    for claim, (e, lo, hi, v) in PLANTED[params["model"]["name"]].items():
        w.writerow([claim, "paper", "Paper Sec. 1", "a finding", "a share",
                    "" if PAPER[claim] is None else PAPER[claim], e, lo, hi, v, ""])
"""
DVC_YAML = """stages:
  claims:
    cmd: python make_claims.py
    deps: [make_claims.py]
    params: [model.name, write_claims]
    outs:
      - outputs/plots/claims:
          cache: false
"""


@pytest.fixture(scope="module")
def toy_repo(tmp_path_factory) -> Path:
    """A git + DVC repo with experiments `exp-alpha` and `exp-beta` (models alpha and beta),
    `exp-beta-again` (beta again) and `exp-none` (no claims table), each run in a temporary
    copy with `--temp` as docs/comparing-runs.md shows (not queued: DVC's queue workers can
    stall after one or two experiments, an open DVC bug)."""
    root = tmp_path_factory.mktemp("across") / "repo"
    root.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    (root / "make_claims.py").write_text(STAGE)
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / "params.yaml").write_text("model:\n  name: alpha\nwrite_claims: true\n")
    commit_repo(root, env, ["dvc", "init", "-q"])
    for name, sets in (
        ("exp-alpha", ["model.name=alpha"]),
        ("exp-beta", ["model.name=beta"]),
        ("exp-beta-again", ["model.name=beta"]),
        ("exp-none", ["model.name=alpha", "write_claims=false"]),
    ):
        run_ok(["dvc", "exp", "run", "--temp", "-n", name, *(f"-S{s}" for s in sets)], root, env)
    return root


def test_the_table_holds_each_models_planted_claims(toy_repo: Path, tmp_path: Path) -> None:
    runs = [read_run(toy_repo, name) for name in ("exp-alpha", "exp-beta")]
    assert [r.model for r in runs] == ["alpha", "beta"]
    table = write_outputs(tmp_path, runs)
    written = pd.read_csv(tmp_path / "plots/across_models/claims.csv")
    assert list(written["claim"]) == ["k.one", "k.two"]  # one row per claim
    for model, claims in PLANTED.items():
        for claim, (estimate, low, high, verdict) in claims.items():
            row = written.set_index("claim").loc[claim]
            assert row[f"{model}.verdict"] == verdict
            assert row[[f"{model}.estimate", f"{model}.ci_low", f"{model}.ci_high"]].tolist() == [
                estimate, low, high
            ]  # fmt: skip
    assert written["paper_number"].iloc[0] == 0.7 and pd.isna(written["paper_number"].iloc[1])
    assert len(table) == 2
    md = (tmp_path / "plots/across_models/claims.md").read_text()
    assert "| `k.one` | 0.700 | 0.500 [0.200, 0.800] supported | -0.400 [-0.600, -0.200] " in md
    commits = pd.read_csv(tmp_path / "plots/across_models/runs.csv")["commit"].tolist()
    assert commits == [r.commit for r in runs] and all(len(c) == 40 for c in commits)
    assert "alpha (exp-alpha" in (tmp_path / "plots/across_models/summary.txt").read_text()
    assert "every claim (rows) on every model (columns)" in drawn(
        tmp_path / "figures/across_models/verdicts.png"
    )


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["exp-alpha", "no-such-exp"], "no experiment or git revision named 'no-such-exp'"),
        (["exp-none"], "experiment 'exp-none' has no outputs/plots/claims/claims.csv"),
        (["exp-beta", "exp-beta-again"], "'exp-beta' and 'exp-beta-again' both ran model 'beta'"),
    ],
)
def test_bad_experiments_fail_in_one_line(
    toy_repo: Path, tmp_path: Path, capsys, names: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*names, "--repo", str(toy_repo), "--outputs", str(tmp_path)])
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and message in error and error.count("\n") == 1
    assert not (tmp_path / "plots").exists()  # nothing half written


def test_the_report_shows_the_table(toy_repo: Path, tmp_path: Path) -> None:
    write_outputs(tmp_path, [read_run(toy_repo, name) for name in ("exp-alpha", "exp-beta")])
    page = render_report(tmp_path, "toy", "")
    assert "<h2>Claims across models: one DVC experiment per model</h2>" in page
    unrecorded = '<span class="meta">registry version not recorded in runs.csv</span>'
    assert f"<th>alpha{unrecorded}</th><th>beta{unrecorded}</th>" in page
    assert '<td class="contradicted">-0.4 [-0.6, -0.2] contradicted</td>' in page


def test_a_folder_that_is_no_dvc_repo_fails_in_one_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["exp-alpha", "--repo", str(tmp_path)])
    assert capsys.readouterr().err == f"error: {tmp_path} is not a DVC repository: pass --repo\n"


def test_an_unknown_name_is_a_pipeline_error(toy_repo: Path) -> None:
    with pytest.raises(PipelineError, match="dvc exp list"):
        read_run(toy_repo, "nope")


@pytest.mark.slow  # two micro pipelines (one task, one seed each): about 15 min on 2 CPU cores
def test_two_tiny_models_as_experiments(tmp_path: Path, shared_data: Path) -> None:
    """Two tiny random BERTs (2 and 3 layers) run as experiments of the micro profile on a
    copy of the project, one after the other in its workspace, collected into one table,
    which the report then shows (the queue of the documented sequence is exercised by the
    toy repo above)."""
    root = tmp_path / "repo"
    env = micro_git_repo(root, shared_data)
    micro = ["-S", "experiment=micro", "-S", "tasks=[mrpc]", "-S", "seeds=[42]"]
    deeper = ["-S", "model.name=tiny_random_l3", "-S", "model.random_config.num_hidden_layers=3"]
    run_ok(["dvc", "exp", "run", "-n", "tiny-l2", *micro], root, env)
    run_ok(["dvc", "exp", "run", "-n", "tiny-l3", *micro, *deeper], root, env)  # stays here
    run_ok([sys.executable, "-m", "pipeline.claims.across_models", "tiny-l2", "tiny-l3"], root, env)

    table = pd.read_csv(root / "outputs/plots/across_models/claims.csv")
    for name, model in (("tiny-l2", "tiny_random"), ("tiny-l3", "tiny_random_l3")):
        run = read_run(root, name)
        own = run.claims.set_index("claim")
        mine = table.set_index("claim").loc[own.index]
        assert run.model == model
        assert mine[f"{model}.verdict"].tolist() == own["verdict"].tolist()
        assert mine[f"{model}.estimate"].fillna(-9).tolist() == own["estimate"].fillna(-9).tolist()
    assert table["paper_number"].notna().any()
    run_ok(["dvc", "repro", "report"], root, env)  # upstream is tiny-l3's: only the report runs
    page = (root / "outputs/report.html").read_text()
    assert "<h2>Claims across models: one DVC experiment per model</h2>" in page
    # both columns judged by this checkout's registry, and tiny-l3's verdicts are the claims
    # section's: neither heading is marked out of date
    latest = versions()[-1].version
    for model in ("tiny_random", "tiny_random_l3"):
        heading = rf'<th>{model}<span class="meta">registry v{latest}, [0-9-]+</span></th>'
        assert re.search(heading, page), model


def test_each_models_line_says_which_registry_judged_it():
    claims = pd.DataFrame(
        {"claim": ["k.one"], "registration": ["registered"], "registry_version": [2],
         "registry_status": ["frozen"], "registry_digest": ["0123456789abcdef"]}
    )  # fmt: skip
    run = ModelRun("exp", "c0ffee", "bert_base_uncased", claims)
    assert judged(run) == "registered by registry version 2 (frozen, 0123456789ab)"
    older = ModelRun("exp", "c0ffee", "m", claims[["claim"]])
    assert judged(older) == "judged before the claims registry"


def test_runs_csv_records_each_runs_registry_with_its_date_and_the_controls(tmp_path):
    first = versions()[0]
    claims = pd.DataFrame(
        {"claim": ["k.one"], "registration": ["fitted"], "registry_version": [first.version],
         "registry_status": [first.status], "registry_digest": [first.digest]}
    )  # fmt: skip
    runs = [ModelRun("exp-a", "c0ffee", "a", claims), ModelRun("exp-n", "c0ffee", "n", claims,
                                                                  control=True)]  # fmt: skip
    table = runs_table(runs)
    assert table["control"].tolist() == [False, True]
    assert table["registry_date"].tolist() == [first.date.isoformat()] * 2
    assert table["registry_version"].tolist() == [first.version] * 2
    assert f"{first.digest[:12]}, {first.date.isoformat()})" in judged(runs[0])
    assert runs[1].heading == f"n (random control, registry v{first.version})"


def _run(model: str, verdicts: dict[str, str], control: bool = False) -> ModelRun:
    claims = pd.DataFrame(
        [
            {"claim": c, "kind": "paper", "source": "P", "finding": "f", "statistic": "s",
             "paper_number": 0.1, "estimate": 0.0, "ci_low": -1.0, "ci_high": 1.0,
             "verdict": v, "reason": ""}
            for c, v in verdicts.items()
        ]
    )  # fmt: skip
    return ModelRun(f"exp-{model}", "c0ffee0", model, claims, control=control)


def test_findings_held_count_the_real_models_and_never_the_control(tmp_path: Path) -> None:
    runs = [
        _run("small", {"a": "supported", "b": "supported", "c": "inconclusive"}),
        _run("base", {"a": "supported", "b": "contradicted", "c": "not testable"}),
        _run("noise", {"a": "contradicted", "b": "supported", "c": "supported"}, control=True),
    ]
    table = write_outputs(tmp_path, runs)
    assert table.set_index("claim")["supported_on"].to_dict() == {"a": 2, "b": 1, "c": 0}
    text = (tmp_path / "plots/across_models/summary.txt").read_text()
    assert "Of 3 papers' findings, 1 are supported on all 2 real models (small, base): `a`; " \
        "1 on some of them; 1 on none." in text  # fmt: skip
    assert "noise (exp-noise, c0ffee0): 3 (" in text and "; a random control)" in text
    assert "contrastive sentence encoders" in text and "a sixth, as in bert-base" in text
    md = (tmp_path / "plots/across_models/claims.md").read_text()
    assert "| claim | paper (bert-base) | small | base | noise (random control) |" in md


def test_a_control_that_is_not_an_experiment_fails_in_one_line(toy_repo: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["exp-alpha", "--control", "exp-beta", "--repo", str(toy_repo)])
    assert capsys.readouterr().err == "error: --control exp-beta is not among the experiments\n"
