"""A sequence classifier run one encoder layer at a time, so a pass can start at any layer.

Ablation sweeps cache the hidden states that enter each layer and rerun only the layers at
and above the one an ablation touches. That needs the model cut into three parts, which
transformers 5 BERT-family classifiers (BERT, RoBERTa, ELECTRA, ...) all have:

- `model.base_model.embeddings(input_ids=..., token_type_ids=...)` -> [B, T, D];
- `model.base_model.encoder.layer[i](hidden, mask, head_control=...)` -> [B, T, D];
- the head: `classifier(dropout(pooler(h)))` where `classifier` is a linear layer on the
  pooled first-token vector (BERT), else `classifier(h)` (RoBERTa-style heads read h[:, 0]).

The head reads only the first ([CLS]) position of the top layer, so the top layer computes
its keys and values for every token but its attention output projection and feed-forward
block for the first position only (when the layer has BERT's `attention.self`,
`attention.output`, `feed_forward_chunk` parts). `Layerwise.of` checks the cut against the
model's own forward pass, so an architecture that does not fit fails loudly.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.masking_utils import create_bidirectional_mask

from pipeline.attention.engine import HeadControl
from pipeline.core.errors import PipelineError

CHECK_TOLERANCE = 1e-4


def _has_bert_parts(layer: nn.Module) -> bool:
    attention = getattr(layer, "attention", None)
    return all(hasattr(attention, part) for part in ("self", "output")) and hasattr(
        layer, "feed_forward_chunk"
    )


@dataclass
class Layerwise:
    """The three parts of a classifier, called one layer at a time."""

    model: PreTrainedModel
    embeddings: nn.Module
    layers: nn.ModuleList
    pooler: nn.Module | None
    dropout: nn.Module
    classifier: nn.Module
    first_token_top: bool  # the top layer computes the first position only

    @classmethod
    def of(cls, model: PreTrainedModel) -> Layerwise:
        """Cut `model` (put in eval mode) and check the cut; fail with a one-line error where
        it does not fit."""
        model.eval()
        base = model.base_model
        layers = getattr(getattr(base, "encoder", None), "layer", None)
        classifier = getattr(model, "classifier", None)
        pooled = isinstance(classifier, nn.Linear)
        pooler = getattr(base, "pooler", None)
        if (
            getattr(base, "embeddings", None) is None
            or not isinstance(layers, nn.ModuleList)
            or classifier is None
            or (pooled and pooler is None)
            or model.config.is_decoder
        ):
            raise PipelineError(
                f"{type(model).__name__} is not supported layer by layer: ablation needs a "
                "BERT-family encoder classifier (base_model.embeddings, base_model.encoder.layer, "
                "a classifier head), e.g. BertForSequenceClassification"
            )
        cut = cls(
            model=model,
            embeddings=base.embeddings,
            layers=layers,
            pooler=pooler if pooled else None,
            dropout=getattr(model, "dropout", nn.Identity()),
            classifier=classifier,
            first_token_top=_has_bert_parts(layers[-1]),
        )
        cut.check()
        return cut

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def embed(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(hidden [B, T, D] entering layer 0, attention mask for the layers or None)."""
        hidden = self.embeddings(
            input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids")
        )
        mask = create_bidirectional_mask(
            config=self.model.config, inputs_embeds=hidden, attention_mask=batch["attention_mask"]
        )
        return hidden, mask

    def logits(
        self,
        hidden: torch.Tensor,  # [B, T, D] entering layer `start`
        mask: torch.Tensor | None,
        start: int = 0,
        control: HeadControl | None = None,
        keep: list[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """Logits [B, C] from layer `start` up; appends each layer's input to `keep` if given."""
        for layer in self.layers[start:-1]:
            if keep is not None:
                keep.append(hidden)
            output = layer(hidden, mask, head_control=control)
            hidden = output[0] if isinstance(output, tuple) else output
        if keep is not None:
            keep.append(hidden)
        return self._classify(self._top(hidden, mask, control))

    def _top(self, hidden, mask, control) -> torch.Tensor:
        """The top layer's output [B, 1, D] (first position) or [B, T, D]."""
        top = self.layers[-1]
        if not self.first_token_top:
            output = top(hidden, mask, head_control=control)
            return output[0] if isinstance(output, tuple) else output
        context, _ = top.attention.self(hidden, mask, head_control=control)  # [B, T, D]
        first = top.attention.output(context[:, :1], hidden[:, :1])  # [B, 1, D]
        return top.feed_forward_chunk(first)

    def _classify(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits [B, C] from the top layer's output, whose first position the head reads."""
        if self.pooler is not None:
            return self.classifier(self.dropout(self.pooler(hidden)))
        return self.classifier(hidden)

    @torch.no_grad()
    def check(self) -> None:
        """Raise if the layer-by-layer pass disagrees with the model's forward pass on a
        small padded batch."""
        generator = torch.Generator().manual_seed(0)
        ids = torch.randint(5, self.model.config.vocab_size, (2, 7), generator=generator)
        batch = {
            "input_ids": ids.to(self.model.device),
            "attention_mask": torch.tensor([[1] * 7, [1] * 4 + [0] * 3], device=self.model.device),
        }
        hidden, mask = self.embed(batch)
        gap = float((self.logits(hidden, mask) - self.model(**batch).logits).abs().max())
        if not gap <= CHECK_TOLERANCE:
            raise PipelineError(
                f"{type(self.model).__name__}: running its layers one by one gives logits "
                f"{gap:.2g} away from its forward pass; this architecture is not supported "
                "by the layer-wise ablation sweep"
            )
