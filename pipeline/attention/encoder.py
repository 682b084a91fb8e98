"""The pre-trained encoder attached to the engine: what the stages that read a model's maps
without fine-tuning it (framenet, clark_syntax, clark_coref) run."""

from __future__ import annotations

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.engine import attach
from pipeline.core.schema import ModelConfig
from pipeline.models.loading import load_encoder, load_tokenizer


def load_attached_encoder(
    settings: ModelConfig, device: torch.device, seed: int
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The pre-trained encoder of `settings` (seeded by `seed` when it is random) on
    `device`, in eval mode, attached to the attention engine (pipeline/attention/engine.py),
    and its tokenizer."""
    tokenizer = load_tokenizer(settings)
    model = load_encoder(settings, tokenizer, seed=seed)
    return attach(model.to(device).eval()), tokenizer
