"""The pattern CNN's input channel groups (pipeline/kovaleva/patterns/channels.py) and a
classifier saved with them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns.channels import (
    CHANNEL_GROUPS,
    OFFSETS,
    channel_count,
    full_resolution_masses,
    input_channels,
)
from pipeline.kovaleva.patterns.cnn import (
    PatternCNN,
    load_classifier,
    pairs_of,
    predict,
    save_classifier,
)
from pipeline.kovaleva.patterns.mapsets import LabelledMap
from pipeline.kovaleva.patterns.roles import role_channels

TOKENS = ["[CLS]", *[f"w{i}" for i in range(10)], "[SEP]", *[f"v{i}" for i in range(10)], "[SEP]"]
N = len(TOKENS)  # 23


def column_and_diagonal(column: float) -> torch.Tensor:
    """[1, N, N]: every query gives `column` to [CLS] and the rest to the next token (the last
    query to itself)."""
    a = torch.zeros(N, N)
    a[:, 0] = column
    for i in range(N):
        a[i, min(i + 1, N - 1)] += 1 - column
    return a[None]


def test_the_original_groups_are_the_original_input() -> None:
    maps = torch.rand(2, N, N)
    maps = maps / maps.sum(-1, keepdim=True)
    got = input_channels(maps, TOKENS, 16, ["weights", "contrast", "roles"])  # [2, 5, 16, 16]
    weights = F.interpolate(maps[:, None], size=(16, 16), mode="area")
    roles = F.interpolate(torch.from_numpy(role_channels(TOKENS))[None], size=(16, 16), mode="area")
    expected = torch.cat(
        [
            torch.log1p(weights * N),
            weights / weights.amax(dim=(2, 3), keepdim=True),
            roles.expand(2, -1, -1, -1),
        ],
        dim=1,
    )
    assert torch.equal(got, expected)


def test_the_band_keeps_a_diagonal_that_a_strong_column_hides() -> None:
    """At 8 x 8 a 23-token map averages ~3 x 3 cells: the contrast channel's diagonal fades
    beside a column holding 0.8 of every row, the band channel shows the diagonal alone."""
    maps = column_and_diagonal(0.8)
    got = input_channels(maps, TOKENS, 8, ["contrast", "band", "plain"])[0]  # [3, 8, 8]
    contrast, band, plain = got
    cells = torch.arange(8)
    off_diagonal = (cells[:, None] - cells[None, :]).abs() > 1  # [8, 8]
    assert band[1:, 0].max() == 0  # the [CLS] column is not in the band
    assert band[off_diagonal].max() == 0
    assert torch.diagonal(band)[1:-1].min() > 0
    assert contrast[:, 0].min() > 0.8  # the column is near the contrast's peak ...
    assert torch.diagonal(contrast)[2:].max() < 0.25  # ... and the diagonal fades beside it
    assert torch.diagonal(plain)[1:-1].min() > 0.5  # without the column it is the peak


def test_masses_are_full_resolution_sums() -> None:
    maps = column_and_diagonal(0.5)
    sums = full_resolution_masses(maps, TOKENS)[0]  # [9]
    assert sums[0] == pytest.approx(0.5)  # [CLS]
    # the next token is a [SEP] for 2 queries; the last query attends to itself, a [SEP]
    next_token = OFFSETS.index(1)
    assert sums[2 + next_token] == pytest.approx(0.5 * (N - 3) / N)
    assert sums[2 + OFFSETS.index(-1)] == 0
    planes = input_channels(maps, TOKENS, 8, ["masses"])  # [1, 9, 8, 8]
    assert planes.shape == (1, CHANNEL_GROUPS["masses"], 8, 8)
    assert torch.equal(planes[0, :, 3, 5], sums)


def test_a_single_sentence_keeps_all_its_plain_mass_in_its_own_sentence() -> None:
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    maps = torch.full((1, 5, 5), 0.2)
    assert full_resolution_masses(maps, tokens)[0, 2 + len(OFFSETS)] == 1.0


def test_an_unknown_group_names_the_setting() -> None:
    with pytest.raises(PipelineError, match=r"input_channels.*'diag'"):
        channel_count(["weights", "diag"])
    with pytest.raises(PipelineError, match="input_channels"):
        channel_count([])


def test_a_saved_classifier_reads_its_own_channels(tmp_path) -> None:
    groups = ["weights", "band", "masses"]
    torch.manual_seed(0)
    net = PatternCNN([4, 4, 8, 8], 0.0, channel_count(groups)).eval()
    save_classifier(tmp_path / "cnn.pt", [[net], [net]], [4, 4, 8, 8], 8, groups, ["x"])
    saved = load_classifier(tmp_path / "cnn.pt")
    assert saved.input_channels == tuple(groups)
    assert saved.input_size == 8
    rng = np.random.default_rng(0)
    weights = rng.random((N, N)).astype(np.float32)
    entry = LabelledMap(weights / weights.sum(-1, keepdims=True), tuple(TOKENS))
    inputs = input_channels(torch.from_numpy(entry.weights)[None], TOKENS, 8, groups)
    pairs = pairs_of([entry])
    assert torch.equal(predict([net], inputs, pairs), predict(saved.ensembles[0], inputs, pairs))
