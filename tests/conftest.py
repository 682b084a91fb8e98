"""Shared fixtures: offline data location, tokenizer, and tiny random BERTs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf
from transformers import AutoModelForSequenceClassification, BertConfig, PreTrainedModel

from pipeline.core.config import CONF_DIR
from pipeline.models.loading import load_tokenizer

REPO = Path(__file__).resolve().parent.parent
torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The offline data sets (../shared/data, or $DARK_SECRETS_DATA)."""
    path = Path(os.environ.get("DARK_SECRETS_DATA", REPO.parent / "shared" / "data"))
    if not path.exists():
        pytest.skip(f"offline data not found at {path}")
    return path


@pytest.fixture(scope="session")
def tiny_model_cfg():
    return OmegaConf.load(CONF_DIR / "model" / "tiny_random.yaml")


@pytest.fixture(scope="session")
def minilm_cfg():
    return OmegaConf.load(CONF_DIR / "model" / "minilm_l6.yaml")


@pytest.fixture(scope="session")
def tokenizer(minilm_cfg):
    """The uncased WordPiece tokenizer shipped with the MiniLM package."""
    return load_tokenizer(minilm_cfg)


def small_bert() -> PreTrainedModel:
    """A seeded random BERT classifier of 2 layers x 3 heads, no dropout (eval mode), with
    large enough weights that attention maps differ visibly between heads."""
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=40, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
        intermediate_size=32, max_position_embeddings=16, num_labels=2,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.3,
    )  # fmt: skip
    return AutoModelForSequenceClassification.from_config(config).eval()
