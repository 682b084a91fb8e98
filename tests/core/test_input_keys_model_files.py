"""The key of a job's inputs covers the model's files (pipeline/core/model_files.py): new
weights under the same `model.name_or_path` key new inputs; the same bytes rewritten, or only
a new modification time, keep them; a hub id and a random model add nothing."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf
from transformers import BertConfig, BertModel

from pipeline.core import input_keys
from pipeline.core.config import CONF_DIR
from tests.support.builders import composed

PRODUCER = "finetune"  # reads the model's pre-trained weights
WEIGHTS = "model.safetensors"


def tiny_model(where: Path, seed: int) -> Path:
    """A tiny BERT's config and weights saved in `where` (weights drawn from `seed`)."""
    torch.manual_seed(seed)
    shape = BertConfig(
        vocab_size=64,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
    )
    BertModel(shape).save_pretrained(where)
    return where


def config(root: Path) -> DictConfig:
    """The micro profile's config for RTE (its tiny random model), its folders under `root`."""
    cfg = composed("experiment=micro")
    cfg.paths.data, cfg.paths.runs = str(root / "data"), str(root / "runs")
    cfg.tasks = ["rte"]
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "rte.yaml")
    return cfg


def with_model(root: Path, folder: Path) -> DictConfig:
    cfg = config(root)
    OmegaConf.update(cfg, "model.name_or_path", str(folder), merge=False)
    OmegaConf.update(cfg, "model.tokenizer", None, merge=False)
    OmegaConf.update(cfg, "model.random_config", None, merge=False)
    return cfg


def test_new_weights_at_the_same_path_key_new_inputs(tmp_path):
    model = tiny_model(tmp_path / "model", seed=0)
    cfg = with_model(tmp_path, model)
    before = input_keys.folder(cfg, PRODUCER)
    other = tiny_model(tmp_path / "other", seed=1)
    (model / WEIGHTS).write_bytes((other / WEIGHTS).read_bytes())
    assert input_keys.folder(cfg, PRODUCER) != before
    assert input_keys.MODEL_FILES in input_keys.settings(cfg, PRODUCER)


def test_the_same_bytes_rewritten_keep_the_inputs(tmp_path):
    model = tiny_model(tmp_path / "model", seed=0)
    cfg = with_model(tmp_path, model)
    before = input_keys.folder(cfg, PRODUCER)
    weights = model / WEIGHTS
    weights.write_bytes(weights.read_bytes())
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert input_keys.folder(cfg, PRODUCER) == before


def test_a_hub_id_and_a_random_model_add_no_files(tmp_path):
    hub = config(tmp_path)
    OmegaConf.update(hub, "model.name_or_path", "org/not-a-local-folder", merge=False)
    OmegaConf.update(hub, "model.random_config", None, merge=False)
    OmegaConf.update(hub, "model.tokenizer", None, merge=False)  # the hub id's own
    assert input_keys.MODEL_FILES not in input_keys.settings(hub, PRODUCER)
    random = config(tmp_path)  # the micro profile's tiny random model
    assert random.model.random_config is not None
    assert input_keys.MODEL_FILES not in input_keys.settings(random, PRODUCER)
