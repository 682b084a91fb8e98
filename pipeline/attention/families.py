"""Where each encoder family keeps the parts that the layer-wise runner
(pipeline/attention/layerwise.py) and the value-weighted norms (pipeline/attention/norms.py) read.

One row per family, keyed by transformers' `config.model_type`; every accessor takes the base
model (`model.base_model`, the encoder without its task head) or one of its layers:

- `layers(base)`: the module that computes layer i, for every i (ALBERT shares one group's
  module between layers, so it appears once per layer it computes);
- `value(layer)`, `output(layer)`: the self-attention's value projection (a linear layer and
  the first row of its value block, since ModernBERT fuses query, key and value) and its
  output projection (a linear layer whose input is the heads' context [.., H*D]);
- `embed(base, batch)`: the hidden states [B, T, D] that enter layer 0 (after ALBERT's and
  ELECTRA's projection of smaller embeddings), `None` where a pass cannot start at a layer;
- `terms(base, hidden)`: what the encoder computes once per pass and hands to every layer
  after the mask, from the hidden states [B, T, D] of the pass (MPNet's relative position
  bias [B, H, T, T], which reads only their shape); nothing for the other families;
- `head(model, hidden)`: the classifier's logits [B, C] from the top layer's output
  [B, T or 1, D], of which every head below reads the first position only.

`not_layerwise` says why a family cannot be run one layer at a time: its layers take terms
its encoder computes once per pass in a way the runner does not reproduce (DeBERTa's relative
embeddings, ModernBERT's rotary embeddings and unpadded inputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn
from transformers import PreTrainedModel

from pipeline.core.errors import PipelineError

Batch = dict[str, torch.Tensor]


@dataclass(frozen=True)
class Layout:
    layers: Callable[[nn.Module], Sequence[nn.Module]]
    value: Callable[[nn.Module], tuple[nn.Linear, int]]
    output: Callable[[nn.Module], nn.Linear]
    embed: Callable[[nn.Module, Batch], torch.Tensor] | None = None
    terms: Callable[[nn.Module, torch.Tensor], tuple[torch.Tensor, ...]] = lambda base, hidden: ()
    head: Callable[[PreTrainedModel, torch.Tensor], torch.Tensor] | None = None
    not_layerwise: str = ""


def _bert_embed(base: nn.Module, batch: Batch) -> torch.Tensor:
    hidden = base.embeddings(
        input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids")
    )
    project = getattr(base, "embeddings_project", None)  # ELECTRA with smaller embeddings
    return hidden if project is None else project(hidden)


def _bert_head(model: PreTrainedModel, hidden: torch.Tensor) -> torch.Tensor:
    """BERT: classifier(dropout(pooler(h))), the pooler reading h[:, 0]; RoBERTa, ELECTRA:
    classifier(h), a head that reads h[:, 0] itself."""
    pooler = model.base_model.pooler if isinstance(model.classifier, nn.Linear) else None
    if pooler is not None:
        return model.classifier(model.dropout(pooler(hidden)))
    return model.classifier(hidden)


def _distilbert_head(model: PreTrainedModel, hidden: torch.Tensor) -> torch.Tensor:
    pooled = nn.functional.relu(model.pre_classifier(hidden[:, 0]))  # [B, D]
    return model.classifier(model.dropout(pooled))


def _albert_layers(base: nn.Module) -> list[nn.Module]:
    """The group module of each layer, as AlbertTransformer.forward picks it."""
    config = base.config
    groups = base.encoder.albert_layer_groups
    per_group = config.num_hidden_layers / config.num_hidden_groups
    return [groups[int(i / per_group)] for i in range(config.num_hidden_layers)]


def _albert_attention(layer: nn.Module) -> nn.Module:
    if len(layer.albert_layers) != 1:
        raise PipelineError(
            f"ALBERT with inner_group_num={len(layer.albert_layers)}: a layer group holds "
            "several attention modules; only inner_group_num=1 is supported"
        )
    return layer.albert_layers[0].attention


def _albert_embed(base: nn.Module, batch: Batch) -> torch.Tensor:
    hidden = base.embeddings(
        input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids")
    )  # [B, T, E]
    return base.encoder.embedding_hidden_mapping_in(hidden)  # [B, T, D]


def _albert_head(model: PreTrainedModel, hidden: torch.Tensor) -> torch.Tensor:
    base = model.base_model
    pooled = base.pooler_activation(base.pooler(hidden[:, 0]))  # [B, D]
    return model.classifier(model.dropout(pooled))


def _mpnet_terms(base: nn.Module, hidden: torch.Tensor) -> tuple[torch.Tensor]:
    """MPNet's relative position bias [B, H, T, T], as its encoder computes it for a pass."""
    return (base.encoder.compute_position_bias(hidden),)


_BERT = Layout(
    layers=lambda base: base.encoder.layer,
    value=lambda layer: (layer.attention.self.value, 0),
    output=lambda layer: layer.attention.output.dense,
    embed=_bert_embed,
    head=_bert_head,
)
LAYOUTS: dict[str, Layout] = {
    "bert": _BERT,
    "roberta": _BERT,
    "xlm-roberta": _BERT,
    "electra": _BERT,
    "distilbert": Layout(
        layers=lambda base: base.transformer.layer,
        value=lambda layer: (layer.attention.v_lin, 0),
        output=lambda layer: layer.attention.out_lin,
        embed=lambda base, batch: base.embeddings(batch["input_ids"]),
        head=_distilbert_head,
    ),
    "albert": Layout(
        layers=_albert_layers,
        value=lambda layer: (_albert_attention(layer).value, 0),
        output=lambda layer: _albert_attention(layer).dense,
        embed=_albert_embed,
        head=_albert_head,
    ),
    "modernbert": Layout(
        layers=lambda base: base.layers,
        value=lambda layer: (layer.attn.Wqkv, 2 * layer.attn.Wo.in_features),  # fused q, k, v
        output=lambda layer: layer.attn.Wo,
        not_layerwise=(
            "its layers take rotary embeddings and sliding-window masks that its model "
            "computes once per pass, so a pass cannot start at a layer"
        ),
    ),
    "deberta-v2": Layout(
        layers=lambda base: base.encoder.layer,
        value=lambda layer: (layer.attention.self.value_proj, 0),
        output=lambda layer: layer.attention.output.dense,
        not_layerwise=(
            "its layers take relative-position terms that its encoder computes once per pass, "
            "so a pass cannot start at a layer"
        ),
    ),
    "mpnet": Layout(
        layers=lambda base: base.encoder.layer,
        value=lambda layer: (layer.attention.attn.v, 0),
        output=lambda layer: layer.attention.attn.o,
        embed=lambda base, batch: base.embeddings(input_ids=batch["input_ids"]),
        terms=_mpnet_terms,
        head=lambda model, hidden: model.classifier(hidden),  # reads h[:, 0] itself
    ),
}


def layout_of(model: PreTrainedModel) -> Layout:
    """The layout of `model`'s family; a one-line error for a family not in the table."""
    model_type = model.config.model_type
    layout = LAYOUTS.get(model_type)
    if layout is None:
        raise PipelineError(
            f"{type(model).__name__} ({model_type}): no layout known for this family; add a "
            f"row to LAYOUTS in pipeline/attention/families.py (known: {', '.join(LAYOUTS)})"
        )
    return layout


def layer_modules(model: PreTrainedModel) -> Sequence[nn.Module]:
    """The module computing each layer of `model` (an encoder or a classifier)."""
    return layout_of(model).layers(model.base_model)


def output_projection(model: PreTrainedModel, layer: int) -> nn.Linear:
    """The attention output projection of `layer` (0-based)."""
    return layout_of(model).output(layer_modules(model)[layer])


def value_projection(model: PreTrainedModel, layer: int) -> tuple[nn.Linear, int]:
    """The value projection of `layer` and the first row of its value block."""
    return layout_of(model).value(layer_modules(model)[layer])
