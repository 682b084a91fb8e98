"""The model_identity stage (stages/model_identity.py): its record holds the digest of the
model's local files, the same one that keys a job's inputs, and moves with the weights."""

from __future__ import annotations

import json

import torch
from omegaconf import OmegaConf
from transformers import BertConfig, BertModel

from pipeline.core import input_keys
from pipeline.core.layout import model_identity
from pipeline.core.stage import StageRun
from stages.model_identity import run
from tests.support.builders import composed


def test_the_record_follows_the_models_files(tmp_path) -> None:
    cfg = composed("experiment=micro")
    cfg.tasks = ["rte"]
    for key, value in {"name_or_path": str(tmp_path / "model"), "tokenizer": None}.items():
        OmegaConf.update(cfg, f"model.{key}", value, merge=False)
    OmegaConf.update(cfg, "model.random_config", None, merge=False)
    shape = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2)
    records = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        BertModel(shape).save_pretrained(tmp_path / "model")
        run(StageRun(cfg, out_root=tmp_path / f"job{seed}", under_dvc=False))
        written = model_identity(tmp_path / f"job{seed}")
        records.append(json.loads(written.read_text(encoding="utf-8")))
        settings = input_keys.settings(cfg, "finetune")
        assert records[-1]["files_sha256"] == settings[input_keys.MODEL_FILES]
    assert records[0]["files_sha256"] != records[1]["files_sha256"]
    assert records[0]["name_or_path"] == records[1]["name_or_path"]
