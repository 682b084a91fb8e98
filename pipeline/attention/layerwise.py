"""A sequence classifier run one encoder layer at a time, so a pass can start at any layer.

Ablation sweeps cache the hidden states that enter each layer and rerun only the layers at
and above the one an ablation touches. That needs the model cut into three parts, which the
family's layout (pipeline/attention/families.py) names:

- the embeddings: hidden states [B, T, D] entering layer 0;
- the layers: `layer(hidden, mask, *terms, head_control=...)` -> [B, T, D], one module per
  layer (ALBERT's one shared module once per layer it computes), where `terms` are what the
  encoder computes once per pass for every layer (MPNet's relative position bias, computed
  here once per pass and handed to each layer; nothing for the other families);
- the head: logits [B, C] from the top layer's first position (BERT: `classifier(dropout(
  pooler(h)))`; RoBERTa, ELECTRA, MPNet: `classifier(h)`; DistilBERT: `classifier(dropout(
  relu(pre_classifier(h[:, 0]))))`; ALBERT: `classifier(dropout(tanh(pooler(h[:, 0]))))`).

The head reads only the first ([CLS]) position of the top layer, so where the layer has
BERT's `attention.self`, `attention.output`, `feed_forward_chunk` parts (and runs the
interface path) the top layer computes its keys and values for every token but its attention
output projection and feed-forward block for the first position only. A module shared by
several layers (ALBERT) counts its calls per pass to know its layer; a pass that starts at
layer k tells it so first. On the engine's hook path (MPNet, or BERT with route="hooks") each
layer's call hands its `head_control` to the hooks (pipeline/attention/hooked.py).
`Layerwise.of` checks the cut against the model's own forward pass, so an architecture that
does not fit fails loudly; the families whose layers need terms the runner does not compute
(ModernBERT, DeBERTa-v2/v3) are refused in one line.

Compiled (`compile_with`, the `compile` setting), the runner compiles its per-layer step and
its top-layer-and-head step, not the whole model: a pass starts at any layer and keeps each
layer's input, which one graph of the whole model cannot do. Dynamo specialises a step on
the layer it runs, so a run makes one graph per layer per input shape, each reused by every
batch of that shape and every ablation: the head masks and gates are tensor inputs of the
graph (`HeadControl.static`), not constants in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.masking_utils import create_bidirectional_mask

from pipeline.attention.control import ENGINE_LAYERS
from pipeline.attention.engine import ROUTE, HeadControl
from pipeline.attention.families import Layout, layout_of
from pipeline.core.errors import PipelineError
from pipeline.core.schema import CompileConfig
from pipeline.models.compilation import compiled, pad_multiple

CHECK_TOLERANCE = 1e-4


def _has_bert_parts(layer: nn.Module) -> bool:
    attention = getattr(layer, "attention", None)
    return all(hasattr(attention, part) for part in ("self", "output")) and hasattr(
        layer, "feed_forward_chunk"
    )


def _run_layer(layer: nn.Module, hidden, mask, terms, control):
    """`layer` on `hidden` [B, T, D]: the step a compiled runner compiles."""
    return layer(hidden, mask, *terms, head_control=control)


@dataclass
class Layerwise:
    """The three parts of a classifier, called one layer at a time."""

    model: PreTrainedModel
    layout: Layout
    layers: list[nn.Module]  # the module computing layer i
    first_token_top: bool  # the top layer computes the first position only
    # per layer, the modules shared with other layers and the engine's layer tuple they carry
    shared: list[list[nn.Module]] = field(default_factory=list)
    static: bool = False  # compiled: passes need a static HeadControl (compile_with)
    multiple: int = 1  # batch lengths are padded up to a multiple of this (compile_with)
    room: int = 0  # input variants per layer the compiled steps make room for (compile_with)
    step: Callable[..., torch.Tensor] | None = None  # compiled _run_layer, or None: eager
    finish: Callable[..., torch.Tensor] | None = None  # compiled _finish, or None: eager

    @classmethod
    def of(cls, model: PreTrainedModel) -> Layerwise:
        """Cut `model` (put in eval mode; attach it to the engine first) and check the cut;
        fail with a one-line error where it does not fit."""
        model.eval()
        name = f"{type(model).__name__} ({model.config.model_type})"
        layout = layout_of(model)
        if layout.embed is None or layout.head is None:
            raise PipelineError(
                f"{name} is not supported layer by layer: {layout.not_layerwise}; the "
                "ablate and gates stages need BERT, RoBERTa, ELECTRA, DistilBERT, ALBERT or MPNet"
            )
        if getattr(model.config, "is_decoder", False) or getattr(model, "classifier", None) is None:
            raise PipelineError(
                f"{name} is not supported layer by layer: ablation needs an encoder with a "
                "sequence classification head, e.g. BertForSequenceClassification"
            )
        layers = list(layout.layers(model.base_model))
        shared = [
            [m for m in layer.modules() if len(getattr(m, ENGINE_LAYERS, ())) > 1]
            for layer in layers
        ]
        cut = cls(
            model=model,
            layout=layout,
            layers=layers,
            first_token_top=_has_bert_parts(layers[-1]) and getattr(model, ROUTE, None) != "hooks",
            shared=shared,
        )
        cut.check()
        return cut

    def compile_with(self, settings: CompileConfig | None, shapes: int) -> None:
        """Run the layers and the head `torch.compile`d under `settings` (eager when off or
        None), with room for `shapes` more input variants per layer (distinct [B, T] shapes,
        with and without a HeadControl) beside those of earlier calls: dynamo's limit counts
        every graph of a function. The engine's hook path is left eager."""
        self.multiple = pad_multiple(settings)
        if settings is None or not settings.enabled or getattr(self.model, ROUTE) == "hooks":
            self.static, self.step, self.finish = False, None, None
            return
        self.static, self.room = True, self.room + shapes
        self.step = compiled(_run_layer, settings, self.room * self.num_layers)
        self.finish = compiled(self._finish, settings, self.room)

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def embed(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(hidden [B, T, D] entering layer 0, attention mask for the layers or None)."""
        hidden = self.layout.embed(self.model.base_model, batch)
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
        """Logits [B, C] from layer `start` up, in float32 whatever dtype autocast computes
        in; appends each layer's input to `keep` if given."""
        terms = self.layout.terms(self.model.base_model, hidden)  # once for the whole pass
        for index in range(start, self.num_layers - 1):
            if keep is not None:
                keep.append(hidden)
            output = self._layer(index, hidden, mask, terms, control)
            hidden = output[0] if isinstance(output, tuple) else output
        if keep is not None:
            keep.append(hidden)
        return (self.finish or self._finish)(hidden, mask, terms, control)

    def _finish(self, hidden, mask, terms, control) -> torch.Tensor:
        """Logits [B, C], float32, from the top layer's input [B, T, D]."""
        return self._classify(self._top(hidden, mask, terms, control)).float()

    def _top(self, hidden, mask, terms, control) -> torch.Tensor:
        """The top layer's output [B, 1, D] (first position) or [B, T, D]."""
        top = self.layers[-1]
        if not self.first_token_top:
            output = self._layer(self.num_layers - 1, hidden, mask, terms, control)
            return output[0] if isinstance(output, tuple) else output
        context, _ = top.attention.self(hidden, mask, head_control=control)  # [B, T, D]
        first = top.attention.output(context[:, :1], hidden[:, :1])  # [B, 1, D]
        return top.feed_forward_chunk(first)

    def _layer(self, index: int, hidden, mask, terms, control):
        """Layer `index` on `hidden` [B, T, D]; a shared module is told which layer it runs."""
        if control is not None:
            for module in self.shared[index]:
                control.resume_at(module, index)
        return (self.step or _run_layer)(self.layers[index], hidden, mask, terms, control)

    def _classify(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits [B, C] from the top layer's output, whose first position the head reads."""
        return self.layout.head(self.model, hidden)

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
