"""Where "layers 6-10 of 12" stand in a model of another depth (pipeline.clark.attend)."""

from __future__ import annotations

import pytest

from pipeline.clark.attend import middle_layers


@pytest.mark.parametrize(
    ("depth", "first", "last"),
    [(12, 6, 10), (6, 3, 5), (24, 12, 20), (4, 2, 3), (2, 1, 2), (1, 1, 1)],
)
def test_the_middle_layers_scale_with_the_models_depth(depth, first, last):
    assert middle_layers(depth) == range(first, last + 1)
