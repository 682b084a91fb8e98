"""End to end: `dvc repro` on the micro profile in a temporary git repo; the numbering rule
over all its outputs; an empty `dvc metrics diff` between two identical runs; then
`dvc metrics diff`, `dvc params diff`, `dvc plots diff` and `dvc exp run -S` across commits."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.numbering import numbering_violations
from tests.support.repos import micro_git_repo, run_ok

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
            "tools.params",
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
    run_ok(["git", "checkout", "-q", "HEAD", "--", "."], root, env)  # autostage: HEAD
    run_ok(["dvc", "exp", "run", "-S", "experiment=micro", "-S", "finetune.epochs=2"], root, env)
    assert "epochs: 2" in (root / "params.yaml").read_text()  # DVC composed conf/ + -S
    rows = list(csv.DictReader(io.StringIO(run_ok(["dvc", "exp", "show", "--csv"], root, env))))
    experiment = [r for r in rows if r["Experiment"] and r["finetune.epochs"] == "2"]
    column = "outputs/metrics/finetune/mrpc/seed42.json:finetuned.accuracy"
    assert experiment and experiment[0][column]


@pytest.mark.parametrize("model", ["tiny_distilbert", "tiny_albert", "tiny_mpnet"])
def test_dvc_repro_runs_the_whole_pipeline_on_another_family(tmp_path, shared_data, model):
    """The micro profile on a tiny random DistilBERT, ALBERT (one layer shared by both
    layers) and MPNet (relative position bias, the engine's hook path): every stage runs, its
    outputs are there, the claims table is built, and the stored maps are what the fine-tuned
    model's own eager attention computes."""
    root = tmp_path / "repo"
    env = micro_git_repo(root, shared_data, f"model={model}")
    run_ok(["dvc", "repro"], root, env, timeout=5400)  # ~10 min each here; 72 once, cores shared
    check_family_run(root, env, model)


def check_family_run(root: Path, env: dict[str, str], model: str) -> None:
    """What a whole micro run on `model` must leave in `root` (see the test above)."""
    import numpy as np
    import torch

    from pipeline.attention.store import AttentionStore
    from pipeline.core.schema import ModelConfig, typed
    from pipeline.models.loading import load_finetuned, load_tokenizer

    stages = run_ok(["dvc", "stage", "list", "--name-only"], root, env).split()
    locked = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    assert stages and set(stages) <= set(locked), sorted(set(stages) - set(locked))
    for seed in ("seed42", "seed43"):
        for stage in ("finetune", "dump_attention", "analyze", "clark_heads", "measures",
                      "gates", "ablate"):  # fmt: skip
            for task in ("mrpc", "rte"):
                assert (root / f"outputs/metrics/{stage}/{task}/{seed}.json").exists(), stage
        for stage in ("patterns_apply", "table1"):
            assert (root / f"outputs/metrics/{stage}/{seed}.json").exists(), (stage, seed)
    claims = json.loads((root / "outputs/metrics/claims.json").read_text())
    assert claims["seeds.count"] == 2 and claims["seeds.claims"] > 0
    assert (root / "outputs/plots/claims/claims_by_seed.csv").read_text().count("\n") > 1
    report = (root / "outputs/report.html").read_text()
    assert (
        "<h2>Claims: the papers" in report and f"<code>{claims['registry.digest']}</code>" in report
    )
    params = yaml.safe_load((root / "params.yaml").read_text())["model"]
    assert params["name"] == model
    shape = (
        params["random_config"]["num_hidden_layers"],
        params["random_config"]["num_attention_heads"],
    )
    assert numbering_violations(root / "outputs", *shape) == []

    # the stored maps of the fine-tuned variant are the saved model's eager attentions
    finetuned = load_finetuned(root / "outputs/models/mrpc/seed42").eval()
    assert finetuned.config.model_type == model.removeprefix("tiny_")
    finetuned.set_attn_implementation("eager")
    tokenizer = load_tokenizer(typed(ModelConfig, params))
    store = AttentionStore(root / "outputs/attention/mrpc/seed42.parquet", expect_model=model)
    assert store.shape == shape
    stored = store.maps("finetuned", "mrpc")
    for example_id in store.example_ids("finetuned", "mrpc")[:4]:
        info = store.tokens("mrpc", example_id)
        batch = {"input_ids": torch.tensor([tokenizer.convert_tokens_to_ids(info.tokens)])}
        if model == "tiny_albert":  # DistilBERT and MPNet have no segment embeddings
            batch["token_type_ids"] = torch.from_numpy(info.segment_ids)[None]
        with torch.no_grad():
            eager = finetuned(**batch, output_attentions=True).attentions  # L x [1, H, n, n]
        want = torch.cat(eager).numpy()  # [L, H, n, n]
        np.testing.assert_allclose(stored[example_id], want, atol=2e-3, rtol=0)
