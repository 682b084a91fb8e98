"""Tiny random encoders of every family the engine supports, and weight-surgery oracles.

The oracles disable heads without the engine, by editing a copy's weights and running it
with eager attention:

- zero: head h's columns of the attention output projection set to 0, so the head adds
  nothing (what Michel et al.'s zero mode means);
- uniform: head h's query and key rows (weights and biases) set to 0, so all its scores are
  equal and its softmax spreads 1/n over the keys the mask allows (Kovaleva et al.'s uniform
  head; on DeBERTa the relative-position terms are products with the zeroed queries and keys,
  so they vanish too; MPNet adds a relative position bias shared by all layers, zeroed for h
  too, so its uniform oracle disables a head in every layer).

ALBERT shares one layer's weights across all layers, so its oracle first unshares them (the
same weights copied into one group per layer), which leaves the model's function unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from transformers import (
    AlbertConfig,
    AutoModel,
    BertConfig,
    DebertaV2Config,
    DistilBertConfig,
    ElectraConfig,
    ModernBertConfig,
    MPNetConfig,
    PretrainedConfig,
    PreTrainedModel,
    RobertaConfig,
    XLMRobertaConfig,
)

from pipeline.data.encoding import collate

LENGTHS = [9, 5, 7]  # real lengths of the test batch (padded to 9)
LAYERS, HEADS = 3, 4
COMMON = dict(
    vocab_size=50,
    hidden_size=32,
    num_hidden_layers=LAYERS,
    num_attention_heads=HEADS,
    intermediate_size=64,
    max_position_embeddings=40,
    initializer_range=0.2,  # large weights: peaked maps
)


@dataclass(frozen=True)
class HeadParts:
    """One layer's attention weights as the oracles edit them."""

    query: tuple[nn.Linear, int]  # (linear, first row of the query block)
    key: tuple[nn.Linear, int]  # (linear, first row of the key block)
    output: nn.Linear  # attention output projection: input the heads' context [.., H*D]
    shared_bias: nn.Embedding | None = None  # MPNet: relative position bias [buckets, H]


@dataclass(frozen=True)
class Family:
    name: str
    config: Callable[[], PretrainedConfig]
    parts: Callable[[PreTrainedModel], list[HeadParts]]  # one per layer
    pad_id: int = 0
    route: str = "auto"
    per_layer_uniform: bool = True  # False where the oracle must disable a head in every layer


def _bert_parts(model: PreTrainedModel) -> list[HeadParts]:
    return [
        HeadParts(
            (layer.attention.self.query, 0),
            (layer.attention.self.key, 0),
            layer.attention.output.dense,
        )
        for layer in model.encoder.layer
    ]


def _distilbert_parts(model: PreTrainedModel) -> list[HeadParts]:
    return [
        HeadParts((b.attention.q_lin, 0), (b.attention.k_lin, 0), b.attention.out_lin)
        for b in model.transformer.layer
    ]


def _albert_parts(model: PreTrainedModel) -> list[HeadParts]:
    groups = model.encoder.albert_layer_groups
    if len(groups) != model.config.num_hidden_layers:
        raise ValueError("unshare the ALBERT model first (unshared_albert)")
    return [
        HeadParts((a.query, 0), (a.key, 0), a.dense)
        for a in (group.albert_layers[0].attention for group in groups)
    ]


def _modernbert_parts(model: PreTrainedModel) -> list[HeadParts]:
    width = model.config.hidden_size
    return [HeadParts((la.attn.Wqkv, 0), (la.attn.Wqkv, width), la.attn.Wo) for la in model.layers]


def _deberta_parts(model: PreTrainedModel) -> list[HeadParts]:
    return [
        HeadParts(
            (layer.attention.self.query_proj, 0),
            (layer.attention.self.key_proj, 0),
            layer.attention.output.dense,
        )
        for layer in model.encoder.layer
    ]


def _mpnet_parts(model: PreTrainedModel) -> list[HeadParts]:
    bias = model.encoder.relative_attention_bias
    return [
        HeadParts((la.attention.attn.q, 0), (la.attention.attn.k, 0), la.attention.attn.o, bias)
        for la in model.encoder.layer
    ]


SPECIAL_IDS = dict(pad_token_id=1, bos_token_id=2, eos_token_id=3)
FAMILIES = [
    Family("bert", lambda: BertConfig(**COMMON), _bert_parts),
    Family("bert-hooks", lambda: BertConfig(**COMMON), _bert_parts, route="hooks"),
    Family("roberta", lambda: RobertaConfig(**COMMON, pad_token_id=1), _bert_parts, pad_id=1),
    Family(
        "xlm-roberta", lambda: XLMRobertaConfig(**COMMON, pad_token_id=1), _bert_parts, pad_id=1
    ),
    Family("electra", lambda: ElectraConfig(**COMMON, embedding_size=16), _bert_parts),
    Family(
        "distilbert",
        lambda: DistilBertConfig(
            vocab_size=50,
            dim=32,
            n_layers=LAYERS,
            n_heads=HEADS,
            hidden_dim=64,
            max_position_embeddings=40,
            initializer_range=0.2,
        ),
        _distilbert_parts,
    ),
    Family("albert", lambda: AlbertConfig(**COMMON, embedding_size=16), _albert_parts),
    Family(
        "modernbert",
        lambda: ModernBertConfig(
            **COMMON,
            **SPECIAL_IDS,
            cls_token_id=2,
            sep_token_id=3,
            global_attn_every_n_layers=2,
            local_attention=4,  # layer 1: window of 2 each side
        ),
        _modernbert_parts,
        pad_id=1,
    ),
    Family(
        "deberta-v3",
        lambda: DebertaV2Config(
            **COMMON,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            position_buckets=8,
            max_relative_positions=16,
            share_att_key=True,
            norm_rel_ebd="layer_norm",
            position_biased_input=False,
        ),
        _deberta_parts,
    ),
    Family(
        "mpnet",
        lambda: MPNetConfig(**COMMON, pad_token_id=1),
        _mpnet_parts,
        pad_id=1,
        per_layer_uniform=False,
    ),
]


def plain_model(family: Family) -> PreTrainedModel:
    """The family's tiny random encoder (seeded), in eval mode, with its default attention."""
    torch.manual_seed(0)
    return AutoModel.from_config(family.config()).eval()


def eager_copy(model: PreTrainedModel) -> PreTrainedModel:
    eager = copy.deepcopy(model)
    eager.set_attn_implementation("eager")
    return eager


def make_batch(pad_id: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """input_ids and attention_mask [3, 9] of random ids >= 5, real lengths LENGTHS."""
    generator = torch.Generator().manual_seed(seed)
    rows = [
        {"input_ids": torch.randint(5, 50, (n,), generator=generator).tolist()} for n in LENGTHS
    ]
    return collate(rows, pad_id)


def unshared_albert(model: PreTrainedModel) -> PreTrainedModel:
    """The same ALBERT with its shared layer copied into one group per layer."""
    config = copy.deepcopy(model.config)
    config.num_hidden_groups = config.num_hidden_layers
    unshared = AutoModel.from_config(config).eval()
    state = model.state_dict()
    for key in list(state):
        if key.startswith("encoder.albert_layer_groups.0."):
            for group in range(1, config.num_hidden_groups):
                state[key.replace("groups.0.", f"groups.{group}.")] = state[key]
    unshared.load_state_dict(state)
    return unshared


def oracle(
    family: Family, model: PreTrainedModel, disabled: torch.Tensor, mode: str
) -> PreTrainedModel:
    """An eager copy of `model` with the heads of `disabled` (bool [L, H]) removed by editing
    its weights (the module docstring says how)."""
    edited = unshared_albert(model) if family.name == "albert" else copy.deepcopy(model)
    edited = eager_copy(edited)
    width = edited.config.hidden_size // HEADS
    with torch.no_grad():
        for layer, parts in enumerate(family.parts(edited)):
            for head in disabled[layer].nonzero().flatten().tolist():
                block = slice(head * width, (head + 1) * width)
                if mode == "zero":
                    parts.output.weight[:, block] = 0.0
                    continue
                for linear, start in (parts.query, parts.key):
                    rows = slice(start + block.start, start + block.stop)
                    linear.weight[rows] = 0.0
                    if linear.bias is not None:
                        linear.bias[rows] = 0.0
                if parts.shared_bias is not None:
                    parts.shared_bias.weight[:, head] = 0.0
    return edited
