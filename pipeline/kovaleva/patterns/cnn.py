"""The pattern classifier: 8 convolutional layers with ReLU (Kovaleva et al. 2019, Sec. 4.1).

Input. A map A [n, n] of any length n is resized to one S x S channel (S = `input_size`,
32 by default) with area interpolation: shrinking averages blocks of cells, growing repeats
cells, so a one-token-wide stripe stays one stripe and no value is invented. The result is
multiplied by n, which makes a uniform map equal 1 everywhere whatever its length, and
passed through log1p to compress the few very large cells (a column that takes all the mass
becomes ~S before the log).

Network. Eight 3x3 convolutions (padding 1), each followed by ReLU, with 2x2 max-pooling after
every second one (S -> S/16), then a 2x2 adaptive average pool, flatten and one linear layer
to the five classes. Trained with Adam on class-weighted cross-entropy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from pipeline.core.errors import PipelineError
from pipeline.core.io import atomic_path
from pipeline.kovaleva.patterns import CLASSES


def resize_maps(maps: torch.Tensor, size: int) -> torch.Tensor:
    """Maps of one length, float [k, n, n] -> network input float [k, 1, size, size]."""
    n = maps.shape[-1]
    resized = F.interpolate(maps[:, None].float(), size=(size, size), mode="area")
    return torch.log1p(resized * n)


def resize_many(maps: Sequence[np.ndarray], size: int) -> torch.Tensor:
    """Maps of any lengths, each float [n_i, n_i] -> float [len(maps), 1, size, size]."""
    out = torch.empty(len(maps), 1, size, size)
    by_length: dict[int, list[int]] = {}
    for i, m in enumerate(maps):
        by_length.setdefault(m.shape[-1], []).append(i)
    for positions in by_length.values():
        stack = torch.from_numpy(np.stack([maps[i] for i in positions]))  # [k, n, n]
        out[positions] = resize_maps(stack, size)
    return out


class PatternCNN(nn.Module):
    def __init__(self, channels: Sequence[int], num_classes: int = len(CLASSES)) -> None:
        super().__init__()
        if len(channels) % 2:
            raise ValueError("channels: pooling follows every second layer; give an even count")
        layers: list[nn.Module] = []
        width = 1
        for i, out in enumerate(channels):
            layers += [nn.Conv2d(width, out, kernel_size=3, padding=1), nn.ReLU()]
            if i % 2 == 1:
                layers.append(nn.MaxPool2d(2))
            width = out
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.classify = nn.Linear(width * 4, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: float [B, 1, S, S] -> logits [B, num_classes]."""
        return self.classify(self.features(x))


@dataclass(frozen=True)
class CNNTrainingSettings:
    """How the pattern CNN is optimised (Adam on class-weighted cross-entropy)."""

    epochs: int = 100
    batch_size: int = 32
    learning_rate: float = 1e-3
    seed: int = 42


def train(
    model: PatternCNN, inputs: torch.Tensor, targets: torch.Tensor, settings: CNNTrainingSettings
) -> list[float]:
    """Fit `model` on inputs [N, 1, S, S] and class indices [N]; returns the loss per epoch."""
    generator = torch.Generator().manual_seed(settings.seed)
    counts = torch.bincount(targets, minlength=len(CLASSES)).float()
    weights = counts.sum() / (len(CLASSES) * counts.clamp(min=1))  # inverse class frequency
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    losses = []
    model.train()
    for _ in tqdm(range(settings.epochs), desc="train pattern CNN", leave=False):
        order = torch.randperm(len(inputs), generator=generator)
        total = 0.0
        for start in range(0, len(order), settings.batch_size):
            batch = order[start : start + settings.batch_size]
            loss = F.cross_entropy(model(inputs[batch]), targets[batch], weight=weights)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        losses.append(total / len(order))
    return losses


@torch.no_grad()
def predict(model: PatternCNN, inputs: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
    """Class probabilities float [N, num_classes] of inputs [N, 1, S, S]."""
    model.eval()
    parts = [
        model(inputs[i : i + batch_size]).softmax(-1) for i in range(0, len(inputs), batch_size)
    ]
    return torch.cat(parts) if parts else torch.empty(0, len(CLASSES))


def save_classifier(
    path: Path, model: PatternCNN, channels: Sequence[int], input_size: int
) -> None:
    """The weights and what is needed to rebuild and feed the network, written atomically."""
    with atomic_path(path) as tmp:
        torch.save(
            {
                "state_dict": model.state_dict(),
                "channels": list(channels),
                "input_size": input_size,
                "classes": list(CLASSES),
            },
            tmp,
        )


def load_classifier(path: Path) -> tuple[PatternCNN, int]:
    """The saved network and its input size."""
    if not path.exists():
        raise PipelineError(f"pattern classifier not found: {path}; run the patterns_train stage")
    saved = torch.load(path, map_location="cpu")
    if saved["classes"] != list(CLASSES):
        raise PipelineError(f"{path} predicts classes {saved['classes']}, not {list(CLASSES)}")
    model = PatternCNN(saved["channels"])
    model.load_state_dict(saved["state_dict"])
    return model.eval(), int(saved["input_size"])
