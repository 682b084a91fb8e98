"""Shared fixtures: offline data location, tokenizer, and a tiny random BERT."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

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
