"""What the key of a job's inputs covers (pipeline/core/input_keys.py): the task's spec
(conf/task/<task>.yaml) is in it, so an edited spec never reuses inputs made under the old
one and a job refuses by naming the `task.` key; `paths.*` are not, so moving the data or
runs folder keeps every keyed input. Configs only: no stage runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from pipeline.core import input_keys
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.stage import StageRun
from tests.support.builders import composed

PRODUCERS = ("prepare", "finetune", "dump_attention")  # each makes a task's inputs
EDITED_SPEC = ("task.eval_split", "test_matched")  # one value of conf/task/rte.yaml changed


def config(root: Path, *overrides: str) -> DictConfig:
    """The micro profile's config for RTE, its folders under `root`."""
    cfg = composed("experiment=micro", *overrides)
    cfg.paths.data, cfg.paths.outputs = str(root / "data"), str(root / "outputs")
    cfg.paths.runs, cfg.device = str(root / "runs"), "cpu"
    cfg.tasks = ["rte"]
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "rte.yaml")
    return cfg


def edited(cfg: DictConfig, key: str, value: object) -> DictConfig:
    other = cfg.copy()
    OmegaConf.update(other, key, value, merge=False)
    return other


@pytest.mark.parametrize("producer", PRODUCERS)
def test_an_edited_task_spec_keys_the_inputs_apart(tmp_path, producer):
    cfg = config(tmp_path)
    other = edited(cfg, *EDITED_SPEC)
    assert input_keys.folder(other, producer) != input_keys.folder(cfg, producer)
    assert input_keys.differing(cfg, other, producer) == [EDITED_SPEC[0]]


def test_a_job_under_an_edited_task_spec_refuses_naming_the_task_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(config(tmp_path)))
    job = StageRun(
        edited(config(tmp_path), *EDITED_SPEC), out_root=tmp_path / "job", under_dvc=False
    )
    with pytest.raises(PipelineError) as raised:
        _ = job.model_folder
    assert f"differ from params.yaml's in {EDITED_SPEC[0]})" in str(raised.value)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_moving_the_folders_keeps_the_keyed_inputs(tmp_path, producer):
    here = config(tmp_path / "here")
    moved = config(tmp_path / "moved")
    moved.paths.shared_data = str(tmp_path / "elsewhere" / "data")
    moved.paths.glue_dir = str(tmp_path / "elsewhere" / "glue")
    assert [k for k in here.paths if here.paths[k] == moved.paths[k]] == []  # every path moved
    assert input_keys.folder(moved, producer).relative_to(moved.paths.runs) == (
        input_keys.folder(here, producer).relative_to(here.paths.runs)
    )
    assert not [k for k in input_keys.settings(here, producer) if k.startswith("paths")]
