"""Several pattern CNNs of one architecture trained as one batched model.

Each network keeps what `cnn.train` gives it: its initial weights (drawn after
`torch.manual_seed(seed)`), its data order (a generator seeded with `seed`), its dropout
masks (the global generator's state after its initialisation, carried on in a generator of
its own), Adam with the cosine schedule, and the average of its weights over the last
`average_last` epochs with batch-norm statistics recomputed for them. The networks of one
model train on the same rows; the loss is the sum of their losses, so each network's
gradients are its own.

Layout. Activations are float [G, C, B, H, W] (G networks, C channels, B maps). A 3 x 3
convolution is one batched matrix product per layer: the nine shifted views of the padded
input stacked into columns [G, C * 9, B * H * W], multiplied by the weights [G, O, C * 9].
Under the portable kernels (`pipeline.core.portable`) PyTorch convolves without oneDNN,
and the backward pass of its fallback convolution loops over the maps of a batch (and over
the groups of a grouped convolution): most of a network's training time. Here the matrix
products run in MKL under `MKL_CBWR`. Batch normalisation views [G, C, ...] as G * C
channels of one batch, so each network normalises over its own maps. Every network's numbers
are the same whichever networks share its model (tests/kovaleva/patterns/test_cnn.py)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import CosineAnnealingLR

from pipeline.core.schema import PatternClassifier
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import PatternCNN


def _conv3x3(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x [G, C, B, H, W], weight [G, O, C * 9], bias [G, O] -> [G, O, B, H, W] (padding 1)."""
    g, c, b, h, w = x.shape
    padded = F.pad(x, (1, 1, 1, 1))  # [G, C, B, H + 2, W + 2]
    shifts = [padded[..., i : i + h, j : j + w] for i in range(3) for j in range(3)]
    columns = torch.stack(shifts, dim=2).view(g, c * 9, b * h * w)  # [G, C * 9, B * H * W]
    return torch.baddbmm(bias[:, :, None], weight, columns).view(g, -1, b, h, w)


class StackedCNN(nn.Module):
    """G networks of `PatternCNN`'s architecture with their weights stacked on a first axis."""

    def __init__(self, networks: Sequence[PatternCNN]) -> None:
        super().__init__()
        convs = [[m for m in net.features if isinstance(m, nn.Conv2d)] for net in networks]
        norms = [[m for m in net.features if isinstance(m, nn.BatchNorm2d)] for net in networks]
        layers = range(len(convs[0]))

        def stacked(tensors: list[torch.Tensor]) -> torch.Tensor:
            return torch.stack([t.detach() for t in tensors]).clone()

        self.conv_weight = nn.ParameterList(  # [G, O, C * 9] each
            stacked([c[i].weight.flatten(1) for c in convs]) for i in layers
        )
        self.conv_bias = nn.ParameterList(stacked([c[i].bias for c in convs]) for i in layers)
        self.norm_weight = nn.ParameterList(stacked([n[i].weight for n in norms]) for i in layers)
        self.norm_bias = nn.ParameterList(stacked([n[i].bias for n in norms]) for i in layers)
        for i in layers:  # running statistics [G, O]
            self.register_buffer(f"mean{i}", stacked([n[i].running_mean for n in norms]))
            self.register_buffer(f"var{i}", stacked([n[i].running_var for n in norms]))
        self.classify_weight = nn.Parameter(stacked([n.classify.weight for n in networks]))
        self.classify_bias = nn.Parameter(stacked([n.classify.bias for n in networks]))
        self.eps, self.momentum = norms[0][0].eps, norms[0][0].momentum
        self.dropout = networks[0].drop.p
        self.batches_tracked = 0  # batches that updated the running statistics

    def forward(
        self,
        x: torch.Tensor,
        masks: Sequence[torch.Generator] | None = None,
        momentum: float | None = None,
    ) -> torch.Tensor:
        """x [G, 5, B, S, S] -> logits [G, B, classes]. In training mode batch normalisation
        uses each batch's statistics and updates the running ones (with `momentum`, else the
        networks' own), and `masks` holds each network's dropout generator."""
        g = x.shape[0]
        for i, weight in enumerate(self.conv_weight):
            x = _conv3x3(x, weight, self.conv_bias[i])
            channels = x.shape[1]
            x = F.batch_norm(
                x.view(1, g * channels, -1),  # each network's channels apart
                getattr(self, f"mean{i}").view(-1),
                getattr(self, f"var{i}").view(-1),
                self.norm_weight[i].view(-1),
                self.norm_bias[i].view(-1),
                self.training,
                self.momentum if momentum is None else momentum,
                self.eps,
            ).view(x.shape)
            x = torch.relu(x)
            if i % 2 == 1:
                _, _, b, h, w = x.shape
                x = F.max_pool2d(x.view(g * channels, b, h, w), 2).view(
                    g, channels, b, h // 2, w // 2
                )
        _, channels, b, h, w = x.shape
        x = x.transpose(1, 2).reshape(g * b, channels, h, w)
        x = F.adaptive_avg_pool2d(x, 2).view(g, b, channels * 4)  # [G, B, F]
        if self.training and masks is not None and self.dropout > 0:
            keep = 1 - self.dropout
            noise = [torch.empty(b, channels * 4).bernoulli_(keep, generator=m) for m in masks]
            x = x * torch.stack(noise).div_(keep)
        return torch.baddbmm(self.classify_bias[:, None], x, self.classify_weight.transpose(1, 2))

    def step_statistics(self) -> None:
        """Count one training batch, as each batch-norm layer of a network does."""
        self.batches_tracked += 1

    @torch.no_grad()
    def recompute_statistics(self, inputs: torch.Tensor, batch_size: int) -> None:
        """Batch-norm statistics recomputed as the cumulative mean over `inputs` [N, 5, S, S]
        in batches of `batch_size` (what `torch.optim.swa_utils.update_bn` does)."""
        for i in range(len(self.conv_weight)):
            getattr(self, f"mean{i}").zero_()
            getattr(self, f"var{i}").fill_(1.0)
        self.train()
        batches = inputs.split(batch_size)
        for k, batch in enumerate(batches, start=1):
            x = batch.transpose(0, 1)[None].expand(len(self.classify_bias), -1, -1, -1, -1)
            self(x, momentum=1.0 / k)
        self.batches_tracked = len(batches)

    @torch.no_grad()
    def write_to(self, networks: Sequence[PatternCNN]) -> None:
        """Copy each network's weights and statistics back into `networks`."""
        for g, net in enumerate(networks):
            convs = [m for m in net.features if isinstance(m, nn.Conv2d)]
            norms = [m for m in net.features if isinstance(m, nn.BatchNorm2d)]
            for i, (conv, norm) in enumerate(zip(convs, norms, strict=True)):
                conv.weight.copy_(self.conv_weight[i][g].view_as(conv.weight))
                conv.bias.copy_(self.conv_bias[i][g])
                norm.weight.copy_(self.norm_weight[i][g])
                norm.bias.copy_(self.norm_bias[i][g])
                norm.running_mean.copy_(getattr(self, f"mean{i}")[g])
                norm.running_var.copy_(getattr(self, f"var{i}")[g])
                norm.num_batches_tracked.fill_(self.batches_tracked)
            net.classify.weight.copy_(self.classify_weight[g])
            net.classify.bias.copy_(self.classify_bias[g])


def train_stacked(
    networks: Sequence[PatternCNN],
    dropout_states: Sequence[torch.Tensor],
    inputs: torch.Tensor,
    targets: torch.Tensor,
    settings: PatternClassifier,
    seeds: Sequence[int],
) -> torch.Tensor:
    """Train `networks` (in place) as `cnn.train` trains each alone on inputs [N, 5, S, S] and
    class indices [N]: data order from `seeds`, dropout from the global generator states
    `dropout_states` left by each network's initialisation. Returns the loss per network and
    epoch, float [G, epochs]."""
    model = StackedCNN(networks)
    orders = [torch.Generator().manual_seed(seed) for seed in seeds]
    masks = [torch.Generator() for _ in seeds]
    for generator, state in zip(masks, dropout_states, strict=True):
        generator.set_state(state)
    counts = torch.bincount(targets, minlength=len(CLASSES)).float()
    class_weights = counts.sum() / (len(CLASSES) * counts.clamp(min=1))  # inverse frequency
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    steps = settings.epochs * -(-len(inputs) // settings.batch_size)
    schedule = CosineAnnealingLR(optimiser, T_max=steps)  # stepped once per batch
    averaged: list[torch.Tensor] = []
    averages = 0
    losses = torch.zeros(len(networks), settings.epochs)
    model.train()
    for epoch in range(settings.epochs):
        order = torch.stack([torch.randperm(len(inputs), generator=g) for g in orders])  # [G, N]
        for start in range(0, order.shape[1], settings.batch_size):
            batch = order[:, start : start + settings.batch_size]  # [G, B]
            logits = model(inputs[batch].transpose(1, 2), masks)  # [G, B, classes]
            picked = targets[batch]  # [G, B]
            nll = F.cross_entropy(logits.flatten(0, 1), picked.flatten(), reduction="none")
            weights = class_weights[picked]  # [G, B]
            loss = (weights * nll.view_as(weights)).sum(1) / weights.sum(1)  # [G]
            optimiser.zero_grad()
            loss.sum().backward()
            optimiser.step()
            schedule.step()
            model.step_statistics()
            losses[:, epoch] += loss.detach() * batch.shape[1]
        if settings.average_last > 0 and epoch >= settings.epochs - settings.average_last:
            with torch.no_grad():
                if not averaged:
                    averaged = [p.detach().clone() for p in model.parameters()]
                else:
                    for mean, p in zip(averaged, model.parameters(), strict=True):
                        mean.copy_(mean + (p - mean) / (averages + 1))
            averages += 1
    if averaged:
        with torch.no_grad():
            for p, mean in zip(model.parameters(), averaged, strict=True):
                p.copy_(mean)
        model.recompute_statistics(inputs, settings.batch_size)
    model.write_to(networks)
    return losses / len(inputs)
