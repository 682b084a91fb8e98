"""The model configs of every encoder family compose offline, and a random model of a family
that has no SDPA attention loads and attaches."""

from __future__ import annotations

import pytest
import torch
import yaml
from omegaconf import OmegaConf

from pipeline.attention.engine import HeadControl, attach
from pipeline.core.params import compose_params
from pipeline.core.schema import Config, ModelConfig
from pipeline.models.loading import load_encoder

STANDARD = {
    "bert_base_uncased": "bert-base-uncased",
    "roberta_base": "roberta-base",
    "distilbert_base_uncased": "distilbert-base-uncased",
    "albert_base_v2": "albert-base-v2",
    "electra_base_discriminator": "google/electra-base-discriminator",
    "deberta_v3_base": "microsoft/deberta-v3-base",
    "modernbert_base": "answerdotai/ModernBERT-base",
}


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_model_config_composes_offline_with_its_hub_id(name):
    params = yaml.safe_load(compose_params([f"model={name}"]))
    OmegaConf.merge(OmegaConf.structured(Config), params)  # typed: a wrong key fails here
    assert params["model"]["name"] == name
    assert params["model"]["name_or_path"] == STANDARD[name]
    assert params["model"]["random_config"] is None


@pytest.mark.parametrize("model_type", ["deberta-v2", "mpnet"])
def test_family_without_sdpa_loads_with_eager_attention_and_attaches(tokenizer, model_type):
    cfg = ModelConfig(
        name="tiny",
        name_or_path=None,
        tokenizer=None,
        random_config={
            "model_type": model_type, "hidden_size": 16, "num_hidden_layers": 2,
            "num_attention_heads": 2, "intermediate_size": 32,
            "max_position_embeddings": 64, "pad_token_id": 0,
        },
    )  # fmt: skip
    model = attach(load_encoder(cfg, tokenizer).eval())
    control = HeadControl(capture=[1])
    with torch.no_grad():
        model(input_ids=torch.tensor([[5, 6, 7]]), head_control=control)
    assert control.maps[1].shape == (1, 2, 3, 3)
