"""The pattern classifier: 8 convolutional layers with ReLU (Kovaleva et al. 2019, Sec. 4.1).

Input. A map A [n, n] of any length n is resized to an S x S image (S = `input_size`) with
area interpolation: shrinking averages blocks of cells, growing repeats cells, so a
one-token-wide stripe stays one stripe and no value is invented. The map gives two
channels: multiplied by n (a uniform map is 1 everywhere whatever its length) and passed
through log1p to compress the few very large cells; and divided by its largest cell, the
contrast an annotator sees on a heatmap scaled to the map. Three more channels carry the
token roles of `roles` ([CLS] column, [SEP] columns, same-sentence squares), resized alike.

Network. Eight 3x3 convolutions (padding 1), each followed by batch normalisation and ReLU,
with 2x2 max-pooling after every second one (S -> S/16), then a 2x2 adaptive average pool,
flatten, dropout and one linear layer to the five classes. Trained with Adam on
class-weighted cross-entropy, the learning rate decaying to 0 along a cosine, and the
weights of the last `average_last` epochs averaged (stochastic weight averaging, with the
batch-norm statistics recomputed for the averaged weights). Without batch normalisation the
eight plain ReLU layers train slowly and along seed-dependent paths; at 16 x 16 without the
cosine decay and the averaging, one network agrees less with the visual labels and a share
spreads about twice as much over networks of different seeds. What steadies the shares is
the ensemble: a single network's shares still move by ~0.025 with its seed (README,
"Attention patterns")."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.optim.swa_utils import AveragedModel, update_bn

from pipeline.analyses.patterns_train.settings import PatternClassifier
from pipeline.core.errors import PipelineError
from pipeline.core.io import atomic_path
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.channels import channel_count, input_channels
from pipeline.kovaleva.patterns.mapsets import LabelledMap
from pipeline.kovaleva.patterns.roles import is_pair

ORIGINAL_INPUT = ("weights", "contrast", "roles")  # the input of the classifiers saved so far
IN_CHANNELS = channel_count(ORIGINAL_INPUT)
# Saved with the weights; older files (which do not name their input channels) are refused.
ARCHITECTURE = "conv-bn-relu, named input channels"


def network_inputs(
    maps: np.ndarray | torch.Tensor,
    tokens: Sequence[str],
    size: int,
    groups: Sequence[str] = ORIGINAL_INPUT,
) -> torch.Tensor:
    """Maps of one input, float [k, n, n], and its n word pieces -> float [k, C, size, size]:
    the channel groups `groups` (`channels`), C channels together."""
    return input_channels(torch.as_tensor(maps).float(), tokens, size, groups)


def inputs_of(
    maps: Sequence[LabelledMap], size: int, groups: Sequence[str] = ORIGINAL_INPUT
) -> torch.Tensor:
    """Maps of any lengths with their tokens -> network input float [len(maps), C, S, S]."""
    out = torch.empty(len(maps), channel_count(groups), size, size)
    for i, entry in enumerate(maps):
        out[i] = network_inputs(entry.weights[None], entry.tokens, size, groups)[0]
    return out


class PatternCNN(nn.Module):
    def __init__(
        self,
        channels: Sequence[int],
        dropout: float = 0.0,
        in_channels: int = IN_CHANNELS,
        num_classes: int = len(CLASSES),
    ) -> None:
        super().__init__()
        if len(channels) % 2:
            raise ValueError("channels: pooling follows every second layer; give an even count")
        layers: list[nn.Module] = []
        width = in_channels
        for i, out in enumerate(channels):
            layers += [
                nn.Conv2d(width, out, kernel_size=3, padding=1),
                nn.BatchNorm2d(out),
                nn.ReLU(),
            ]
            if i % 2 == 1:
                layers.append(nn.MaxPool2d(2))
            width = out
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.drop = nn.Dropout(dropout)
        self.classify = nn.Linear(width * 4, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: float [B, 5, S, S] -> logits [B, num_classes]."""
        return self.classify(self.drop(self.features(x)))


def train(
    model: PatternCNN,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    settings: PatternClassifier,
    seed: int,
) -> list[float]:
    """Fit `model` on inputs [N, 5, S, S] and class indices [N] (Adam on class-weighted
    cross-entropy, its learning rate decaying to 0 along a cosine; batches drawn with `seed`);
    returns the loss per epoch. With `settings.average_last` > 0 the model ends with the mean
    of its weights after each of the last `average_last` epochs, its batch-norm statistics
    recomputed on `inputs`."""
    generator = torch.Generator().manual_seed(seed)
    counts = torch.bincount(targets, minlength=len(CLASSES)).float()
    weights = counts.sum() / (len(CLASSES) * counts.clamp(min=1))  # inverse class frequency
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    steps = settings.epochs * -(-len(inputs) // settings.batch_size)
    schedule = CosineAnnealingLR(optimiser, T_max=steps)  # stepped once per batch
    averaged = AveragedModel(model) if settings.average_last > 0 else None
    losses = []
    model.train()
    for epoch in range(settings.epochs):
        order = torch.randperm(len(inputs), generator=generator)
        total = 0.0
        for start in range(0, len(order), settings.batch_size):
            batch = order[start : start + settings.batch_size]
            loss = F.cross_entropy(model(inputs[batch]), targets[batch], weight=weights)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(batch)
        losses.append(total / len(order))
        if averaged is not None and epoch >= settings.epochs - settings.average_last:
            averaged.update_parameters(model)
    if averaged is not None:
        update_bn(inputs.split(settings.batch_size), averaged)
        model.load_state_dict(averaged.module.state_dict())
    return losses


@torch.no_grad()
def predict(
    models: Sequence[PatternCNN], inputs: torch.Tensor, pairs: torch.Tensor, batch_size: int = 512
) -> torch.Tensor:
    """Class probabilities float [N, num_classes] of inputs [N, 5, S, S]: the mean over an
    ensemble of networks. An input of one sentence (`pairs` bool [N] False) is never block
    (by the definition of the type): its block probability is set to 0, the rest rescaled."""
    parts = []
    for start in range(0, len(inputs), batch_size):
        batch = inputs[start : start + batch_size]
        parts.append(torch.stack([m.eval()(batch).softmax(-1) for m in models]).mean(0))
    probs = torch.cat(parts) if parts else torch.empty(0, len(CLASSES))
    probs[~pairs, CLASSES.index("block")] = 0.0
    return probs / probs.sum(-1, keepdim=True)


def pairs_of(maps: Sequence[LabelledMap]) -> torch.Tensor:
    """bool [len(maps)]: which maps are of a two-sentence input."""
    return torch.tensor([is_pair(entry.tokens) for entry in maps], dtype=torch.bool)


def save_classifier(
    path: Path,
    ensembles: Sequence[Sequence[PatternCNN]],
    channels: Sequence[int],
    input_size: int,
    input_channels: Sequence[str],
    trained_on: Sequence[str],
) -> None:
    """The ensembles (the classifier first, then the seed-stability one), what is needed to
    rebuild and feed them (widths, input size, input channel groups), and the label folders
    they learnt from, written atomically; the same classifier gives the same bytes."""
    buffer = io.BytesIO()  # saved in memory: a file name would be recorded in the archive
    torch.save(
        {
            "ensembles": [[model.state_dict() for model in e] for e in ensembles],
            "channels": list(channels),
            "input_size": input_size,
            "input_channels": list(input_channels),
            "classes": list(CLASSES),
            "architecture": ARCHITECTURE,
            "trained_on": list(trained_on),
        },
        buffer,
    )
    with atomic_path(path) as tmp:
        tmp.write_bytes(buffer.getvalue())


@dataclass(frozen=True)
class SavedClassifier:
    ensembles: list[list[PatternCNN]]  # the classifier, then the seed-stability ensemble
    input_size: int
    input_channels: tuple[str, ...]  # the channel groups it reads (`channels`)
    trained_on: tuple[str, ...]  # the label folders (model names) whose visual labels it learnt


def load_classifier(path: Path) -> SavedClassifier:
    """The saved ensembles, their input size and channels, and the labels they learnt from."""
    if not path.exists():
        raise PipelineError(f"pattern classifier not found: {path}; run the patterns_train stage")
    saved = torch.load(path, map_location="cpu")
    if saved.get("classes") != list(CLASSES) or saved.get("architecture") != ARCHITECTURE:
        raise PipelineError(
            f"{path} is not a pattern classifier of this version; rerun patterns_train"
        )
    ensembles = []
    for states in saved["ensembles"]:
        groups = saved["input_channels"]
        ensembles.append(
            [PatternCNN(saved["channels"], 0.0, channel_count(groups)) for _ in states]
        )
        for model, state in zip(ensembles[-1], states, strict=True):
            model.load_state_dict(state)
    trained_on = saved["trained_on"]  # one folder's name in classifiers saved before pooling
    folders = (trained_on,) if isinstance(trained_on, str) else tuple(trained_on)
    return SavedClassifier(
        ensembles, int(saved["input_size"]), tuple(saved["input_channels"]), folders
    )
