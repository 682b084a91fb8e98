"""The pre-trained encoder attached to the engine: what the stages that read a model's maps
without fine-tuning it (framenet, clark_syntax, clark_coref) run."""

from __future__ import annotations

from omegaconf import DictConfig
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.engine import attach
from pipeline.models.loading import load_encoder, load_tokenizer, pick_device


def load_attached_encoder(cfg: DictConfig) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The pre-trained encoder of `cfg.model` on `cfg.device`, in eval mode, attached to the
    attention engine (pipeline/attention/engine.py), and its tokenizer."""
    tokenizer = load_tokenizer(cfg.model)
    model = load_encoder(cfg.model, tokenizer, seed=cfg.seed)
    return attach(model.to(pick_device(cfg.device)).eval()), tokenizer
