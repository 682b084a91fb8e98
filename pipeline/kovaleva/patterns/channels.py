r"""The pattern CNN's input channels, by name: what each shows of a map and its word pieces.

A map A [n, n] (rows: queries, each summing to 1) of an n-token input is shown to the network
as an S x S image of several channels (S = `classifier.input_size`). Shrinking a 19-64 token
map to 16 x 16 averages blocks of about 3 x 3 cells, so a one-token diagonal beside a strong
[CLS]/[SEP] column keeps a third of its weight and can fade beside the column. The channels
computed at full resolution, before any resize, keep what the average would blur:

    weights   log1p(n * area(A)): the map resized (area interpolation), uniform = log 2
    contrast  area(A) / its largest cell: the contrast a reader sees on a heatmap
    roles     three channels from the word pieces (`roles`): the [CLS] column, the [SEP]
              columns, the squares of plain tokens of one sentence
    band      log1p(n * area(A on |i - j| <= 1, plain keys)): the thin diagonal alone, cut
              out at full resolution so that no column shares its cells
    plain     area(A on plain keys) / its largest cell: the map without its [CLS]/[SEP]
              columns, at its own contrast (what lies behind a strong column)
    masses    nine constant planes of full-resolution sums: the mean mass on [CLS] and on
              the [SEP]s, on each diagonal offset -2..2 (plain keys), the share of the plain
              mass kept in the query's own sentence (`features.map_features`' block; 1 for a
              single sentence) and the mean row entropy / log n

`weights`, `contrast` and `roles` are the original input. A set of names is a list of these
groups, in the order of `CHANNEL_GROUPS`'s keys or any other; the network's first layer reads
as many channels as the groups give together (`channel_count`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns.features import map_features
from pipeline.kovaleva.patterns.roles import (
    ROLE_CHANNELS,
    role_channels,
    sentence_ids,
    special_positions,
)

OFFSETS = (-2, -1, 0, 1, 2)  # the diagonal offsets whose mass `masses` carries
CHANNEL_GROUPS = {
    "weights": 1,
    "contrast": 1,
    "roles": len(ROLE_CHANNELS),
    "band": 1,
    "plain": 1,
    "masses": 2 + len(OFFSETS) + 2,
}


def channel_count(groups: Sequence[str]) -> int:
    """How many image channels the named groups give together."""
    unknown = [g for g in groups if g not in CHANNEL_GROUPS]
    if unknown or not groups:
        raise PipelineError(
            f"patterns.classifier.input_channels: unknown or no group {unknown}; "
            f"name groups among {list(CHANNEL_GROUPS)}"
        )
    return sum(CHANNEL_GROUPS[g] for g in groups)


def _area(x: torch.Tensor, size: int) -> torch.Tensor:
    """float [k, c, n, n] -> [k, c, size, size] by area interpolation."""
    return F.interpolate(x, size=(size, size), mode="area")


def _contrast(x: torch.Tensor) -> torch.Tensor:
    """float [k, 1, S, S] divided by each image's largest cell."""
    return x / x.amax(dim=(2, 3), keepdim=True).clamp(min=1e-12)


def full_resolution_masses(maps: torch.Tensor, tokens: Sequence[str]) -> torch.Tensor:
    """The nine sums of `masses` for maps float [k, n, n] of one input: float [k, 9]."""
    n = maps.shape[-1]
    is_cls, is_sep = (torch.from_numpy(m) for m in special_positions(tokens))  # bool [n]
    plain = ~(is_cls | is_sep)
    columns = [maps[:, :, is_cls].sum(-1).mean(-1), maps[:, :, is_sep].sum(-1).mean(-1)]
    for offset in OFFSETS:
        band = torch.diagonal(maps * plain, offset=offset, dim1=1, dim2=2)  # [k, n - |offset|]
        columns.append(band.sum(-1) / n)  # mean over the n queries
    special = (is_cls | is_sep).numpy()
    features = map_features(maps.double().numpy(), special, sentence_ids(tokens))
    own = np.nan_to_num(features["block"].to_numpy(), nan=1.0)  # one sentence: all its own
    columns += [torch.tensor(own), torch.tensor(features["entropy"].to_numpy())]
    return torch.stack([c.float() for c in columns], dim=1)  # [k, 9]


def input_channels(
    maps: torch.Tensor, tokens: Sequence[str], size: int, groups: Sequence[str]
) -> torch.Tensor:
    """Maps float [k, n, n] of one input and its n word pieces -> the named channel groups,
    float [k, channel_count(groups), size, size], in the order of `groups`."""
    channel_count(groups)
    k, n = maps.shape[0], maps.shape[-1]
    weights = _area(maps[:, None], size)  # [k, 1, S, S]
    is_cls, is_sep = special_positions(tokens)
    plain_keys = torch.from_numpy(~(is_cls | is_sep)).float()  # [n]
    parts = []
    for group in groups:
        if group == "weights":
            parts.append(torch.log1p(weights * n))
        elif group == "contrast":
            parts.append(_contrast(weights))
        elif group == "roles":
            roles = _area(torch.from_numpy(role_channels(tokens))[None], size)  # [1, 3, S, S]
            parts.append(roles.expand(k, -1, -1, -1))
        elif group == "band":
            near = torch.ones(n, n).triu(-1).tril(1) * plain_keys  # [n, n]: |i - j| <= 1
            parts.append(torch.log1p(_area((maps * near)[:, None], size) * n))
        elif group == "plain":
            parts.append(_contrast(_area((maps * plain_keys)[:, None], size)))
        else:  # masses
            sums = full_resolution_masses(maps, tokens)  # [k, 9]
            parts.append(sums[:, :, None, None].expand(-1, -1, size, size))
    return torch.cat(parts, dim=1)
