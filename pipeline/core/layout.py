"""Where each stage's results lie under the outputs folder: one rule, used by the stage that
writes them (`StageRun.write_outputs`), by the stages and libraries that read them, and by
the generator of dvc.yaml (pipeline/dag/dvc_yaml.py).

`where` is the stage's task and fine-tuning seed folder, as far as the stage runs per them:
() for a stage run once, (seed,) per seed, (task, seed) per task and seed.
"""

from __future__ import annotations

from pathlib import Path

RESULT_KINDS = ("plots", "figures")  # tables and text; figures with their caption sidecars

# The offline data sets the stages read (pipeline/data/sources.py).
DATA_SOURCES = ("glue", "ud", "gap", "framenet")

# Metrics files named for the data set they score rather than for the stage's run.
NAMED_METRICS = {"clark_syntax": "ud", "clark_coref": "gap"}


def seed_folder(seed: int | str) -> str:
    """`seed42`: the folder, under <kind>/<stage>/<task>/, of one fine-tuning seed."""
    return f"seed{seed}"


def results(root: Path | str, kind: str, stage: str, *where: str) -> Path:
    """<root>/<kind>/<stage>/<where...>: the folder of a stage's tables (`plots`) or figures."""
    return Path(root, kind, stage, *where)


def metrics(root: Path | str, stage: str, *where: str) -> Path:
    """<root>/metrics/<stage>/<task>/seed<N>.json per task and seed, <root>/metrics/<stage>.json
    for a stage run once, <root>/metrics/<stage>/<data set>.json for a named one."""
    parts = (stage, *where, *([NAMED_METRICS[stage]] if stage in NAMED_METRICS else []))
    return Path(root, "metrics", *parts[:-1], f"{parts[-1]}.json")


def model(root: Path | str, task: str, seed: int | str) -> Path:
    """The fine-tuned model of `task` and fine-tuning `seed` (written by finetune)."""
    return Path(root, "models", task, seed_folder(seed))


def attention_store(folder: Path | str, task: str, seed: int | str) -> Path:
    """The attention store of `task` and fine-tuning `seed` in the stores' `folder`
    (<outputs>/attention, written by dump_attention): <folder>/<task>/seed<N>.parquet."""
    return Path(folder, task, f"{seed_folder(seed)}.parquet")


def pattern_classifier(root: Path | str) -> Path:
    """The attention-pattern CNN (written by patterns_train)."""
    return Path(root, "patterns", "cnn.pt")


def pattern_labels(root: Path | str) -> Path:
    """The resolved label of every map labelled by eye (written by patterns_train)."""
    return Path(root, "patterns", "labels.csv")


def pattern_predictions(root: Path | str, seed: int | str) -> Path:
    """The pattern type of every dumped map of fine-tuning `seed` (written by patterns_apply)."""
    return Path(root, "patterns", "predictions", f"{seed_folder(seed)}.parquet")


def model_identity(root: Path | str) -> Path:
    """The record of the model's name, location and files' digest (written by
    model_identity): <paths.outputs>/model/identity.json."""
    return Path(root, "model", "identity.json")


def data_digest(root: Path | str, source: str) -> Path:
    """The digest of the files of offline data set `source` (one of `DATA_SOURCES`) that its
    reader reads (written by data_sources): <paths.data>/sources/<source>.json."""
    return Path(root, "sources", f"{source}.json")


def keyed_inputs(runs: Path | str, experiment: str, model: str, label: str) -> Path:
    """The inputs (data/, models/, attention/) a Hydra job made under settings other than the
    DVC run's, in a folder named by what made them (`label`: producer, task, digest of the
    settings; pipeline/core/input_keys.py): <paths.runs>/<experiment>/<model>/<label>."""
    return Path(runs, experiment, model, label)


def report_page(root: Path | str) -> Path:
    """The HTML report (written by report)."""
    return Path(root, "report.html")
