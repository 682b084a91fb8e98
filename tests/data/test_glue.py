"""GLUE as the offline copy holds it (pipeline/data/glue.py): real row counts and the files' quirks,
malformed lines skipped and counted, errors naming the file and the fix, seeded subsets, and
the prepare step's row limits and per-task floors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.core.errors import PipelineError
from pipeline.analyses.prepare.settings import PrepareConfig
from pipeline.core.schema import GlueSource, load_task, typed
from pipeline.data.glue import read_local_split, subsample
from tests.support.paths import REPO



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
