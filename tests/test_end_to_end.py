"""End to end: `dvc repro` on the micro profile in a temporary git repo; the numbering rule
over all its outputs; an empty `dvc metrics diff` between two identical runs; then
`dvc metrics diff`, `dvc params diff`, `dvc plots diff` and `dvc exp run -S` across commits."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest
import yaml

from tests.conftest import run_ok
from tests.test_numbering import numbering_violations

pytestmark = pytest.mark.slow


def test_dvc_repro_runs_the_whole_pipeline_and_diffs_across_commits(micro_repo):
    root, env = micro_repo
    run_ok(["dvc", "repro"], root, env)
    finetune = json.loads((root / "outputs/metrics/finetune/mrpc/seed42.json").read_text())
    assert {"finetuned.accuracy", "pretrained.accuracy", "random_init.accuracy"} <= set(finetune)
    shown = json.loads(run_ok(["dvc", "metrics", "show", "--json"], root, env))
    assert "outputs/metrics/finetune/rte/seed42.json" in json.dumps(shown)
    for seed in ("seed42", "seed43"):  # every stage downstream of fine-tuning, per seed
        for stage in ("dump_attention", "analyze", "clark_heads", "measures", "gates"):
            assert (root / f"outputs/metrics/{stage}/mrpc/{seed}.json").exists(), (stage, seed)
        for stage in ("patterns_apply", "table1"):
            assert (root / f"outputs/metrics/{stage}/{seed}.json").exists(), (stage, seed)
    by_seed = (root / "outputs/plots/claims/claims_by_seed.csv").read_text()
    assert {row["seed"] for row in csv.DictReader(io.StringIO(by_seed))} == {"42", "43"}
    claims = json.loads((root / "outputs/metrics/claims.json").read_text())
    assert claims["seeds.count"] == 2 and claims["seeds.claims"] > 0
    assert "mrpc.metric_sd" in json.loads((root / "outputs/metrics/cross_seed.json").read_text())
    model = yaml.safe_load((root / "params.yaml").read_text())["model"]["random_config"]
    shape = model["num_hidden_layers"], model["num_attention_heads"]
    assert numbering_violations(root / "outputs", *shape) == []
    run_ok(["git", "add", "-A"], root, env)
    run_ok(["git", "commit", "-qm", "micro results"], root, env)

    run_ok(["dvc", "repro", "-f"], root, env)  # the same run again: no metric may move
    assert json.loads(run_ok(["dvc", "metrics", "diff", "--json"], root, env)) == {}

    run_ok(
        [
            sys.executable,
            "-m",
            "pipeline.core.params",
            "experiment=micro",
            "finetune.learning_rate=0.001",
        ],
        root,
        env,
    )
    run_ok(["dvc", "repro"], root, env)
    params = json.loads(run_ok(["dvc", "params", "diff", "--json"], root, env))
    assert params["params.yaml"]["finetune.learning_rate"]["old"] == 5e-5
    assert params["params.yaml"]["finetune.learning_rate"]["new"] == 0.001
    metrics = json.loads(run_ok(["dvc", "metrics", "diff", "--json", "--all"], root, env))
    assert "finetuned.final_loss" in metrics["outputs/metrics/finetune/mrpc/seed42.json"]
    plots_dir = root / "plots_diff"
    run_ok(["dvc", "plots", "diff", "HEAD", "-o", str(plots_dir)], root, env)
    assert (plots_dir / "index.html").exists()


def test_dvc_exp_run_composes_overrides_into_params(micro_repo):
    root, env = micro_repo
    run_ok(["git", "checkout", "-q", "--", "."], root, env)
    run_ok(["dvc", "exp", "run", "-S", "experiment=micro", "-S", "finetune.epochs=2"], root, env)
    assert "epochs: 2" in (root / "params.yaml").read_text()  # DVC composed conf/ + -S
    rows = list(csv.DictReader(io.StringIO(run_ok(["dvc", "exp", "show", "--csv"], root, env))))
    experiment = [r for r in rows if r["Experiment"] and r["finetune.epochs"] == "2"]
    column = "outputs/metrics/finetune/mrpc/seed42.json:finetuned.accuracy"
    assert experiment and experiment[0][column]
