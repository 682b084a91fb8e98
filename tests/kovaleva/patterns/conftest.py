"""Fixtures of the pattern taxonomy's tests."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def one_thread():
    """Tiny convolutions run fastest on one thread (as the stages run them)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
