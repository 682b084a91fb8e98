"""What tests build rather than load: tiny random BERTs of a given shape."""

from __future__ import annotations

from typing import Any

import torch
from transformers import (
    AutoModel,
    AutoModelForSequenceClassification,
    BertConfig,
    PretrainedConfig,
    PreTrainedModel,
)


def tiny_bert(
    layers: int = 2,
    heads: int = 3,
    *,
    hidden: int = 24,
    intermediate: int = 32,
    vocab: int = 40,
    positions: int = 16,
    labels: int = 2,
    initializer_range: float = 0.3,
    family: type[PretrainedConfig] = BertConfig,
    classifier: bool = True,
    **extra: Any,
) -> PreTrainedModel:
    """A random BERT of `layers` x `heads`, seeded with 0, without dropout, in eval mode,
    running SDPA: a sequence classifier of `labels` labels, or the bare encoder. The default
    initializer range is large enough that attention maps differ visibly between heads.
    `family` builds a BERT-shaped relative (RobertaConfig) with `extra` config keys."""
    config = family(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=positions,
        num_labels=labels,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=initializer_range,
        **extra,
    )
    torch.manual_seed(0)
    auto = AutoModelForSequenceClassification if classifier else AutoModel
    return auto.from_config(config, attn_implementation="sdpa").eval()
