"""A torch.compile backend that counts the graphs it compiles, for tests that hold a
compiled path to one graph per padded shape (aot_eager underneath: no compiler needed)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch._dynamo import register_backend

from pipeline.core.schema import CompileConfig


def counting_backend(name: str) -> tuple[CompileConfig, list[int]]:
    """Register backend `name`; the `compile` setting that uses it, and the list it appends
    each compiled graph's input count to."""
    graphs: list[int] = []

    def backend(graph: torch.fx.GraphModule, example_inputs):
        graphs.append(len(example_inputs))
        return torch._dynamo.lookup_backend("aot_eager")(graph, example_inputs)

    register_backend(backend, name=name)
    return CompileConfig(enabled=True, pad_multiple=8, backend=name), graphs


@contextmanager
def fresh_compilations(graphs: list[int]) -> Iterator[None]:
    """No graph left from another test, and a step that would fall back to eager (past
    dynamo's recompile limit) fails instead of passing the counts unseen."""
    torch._dynamo.reset()
    graphs.clear()
    with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
        yield
    torch._dynamo.reset()
