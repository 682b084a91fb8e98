"""The compiled path (the `compile` setting) on CPU: a compiled forward pass scores and trains
as the eager one does, within float32 rounding, and compiles once per bucketed batch shape,
not once per batch. The backend here is `aot_eager` (torch.compile's graph capture and
autograd tracing without code generation): inductor works on this machine (it needs a C
compiler) but takes minutes per graph on 2 CPU cores."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch._dynamo import register_backend

from pipeline.core.schema import CompileConfig
from pipeline.data.batching import length_grouped_batches
from pipeline.models.compilation import batch_shapes, padding_share
from pipeline.models.training import predict
from tests.support.training_runs import CPU, SEED, SETTINGS, fresh_model, random_rows, run

COMPILED = CompileConfig(enabled=True, pad_multiple=8, backend="aot_eager")
compiled_graphs: list[int] = []


@register_backend
def counted_aot_eager(graph: torch.fx.GraphModule, example_inputs):
    """aot_eager, counting the graphs it compiles."""
    compiled_graphs.append(len(example_inputs))
    return torch._dynamo.lookup_backend("aot_eager")(graph, example_inputs)


@pytest.fixture(scope="module")
def data():
    return random_rows()


def without_dropout(model):
    """Padding to a multiple changes the shape of the dropout masks, and with it the random
    stream: training compares compiled and eager without dropout."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return model


@pytest.fixture(autouse=True)
def fresh_compilations():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_compiled_scoring_equals_eager_within_rounding(tiny_model_cfg, tokenizer, data):
    model = fresh_model(tiny_model_cfg, tokenizer)
    eager = predict(model, data[0], 8, 0, CPU)  # [N, 2]
    padded = predict(model, data[0], 8, 0, CPU, compile_settings=COMPILED)
    assert eager.shape == padded.shape == (30, 2)
    np.testing.assert_allclose(padded, eager, rtol=0, atol=1e-5)  # padding and graph: rounding


@pytest.mark.slow  # torch.compile on the CPU, 15-40 s; quick compiled checks stay in the default
def test_compiled_training_follows_eager(tiny_model_cfg, tokenizer, data):
    eager_model = without_dropout(fresh_model(tiny_model_cfg, tokenizer))
    eager = run(eager_model, data)
    compiled_model = without_dropout(fresh_model(tiny_model_cfg, tokenizer))
    compiled = run(compiled_model, data, compile_settings=COMPILED)
    assert [s for s, _ in compiled] == [s for s, _ in eager]
    np.testing.assert_allclose([x for _, x in compiled], [x for _, x in eager], atol=1e-4)
    a, b = eager_model.state_dict(), compiled_model.state_dict()
    assert a.keys() == b.keys()  # the compiled wrapper's "_orig_mod." names never reach disk
    assert max((a[k] - b[k]).abs().max().item() for k in a) < 1e-4


@pytest.mark.slow  # torch.compile on the CPU, 15-40 s; quick compiled checks stay in the default
def test_it_compiles_once_per_bucketed_shape_not_per_batch(tiny_model_cfg, tokenizer, data):
    lengths = [len(row["input_ids"]) for row in data[0]]
    epochs = [length_grouped_batches(lengths, SETTINGS.batch_size, SEED + e) for e in (0, 1)]
    batches = [b for epoch in epochs for b in epoch]
    shapes = batch_shapes(lengths, batches, COMPILED.pad_multiple)
    assert shapes < batch_shapes(lengths, batches, 1) < len(batches)
    compiled_graphs.clear()
    counted = CompileConfig(enabled=True, pad_multiple=8, backend="counted_aot_eager")
    run(fresh_model(tiny_model_cfg, tokenizer), data, compile_settings=counted)
    assert len(compiled_graphs) == shapes


def test_an_eager_run_pads_to_the_batch_and_compiles_nothing(tiny_model_cfg, tokenizer, data):
    compiled_graphs.clear()
    off = CompileConfig(enabled=False, pad_multiple=8, backend="counted_aot_eager")
    a, b = fresh_model(tiny_model_cfg, tokenizer), fresh_model(tiny_model_cfg, tokenizer)
    assert run(a, data, compile_settings=off) == run(b, data)
    assert not compiled_graphs


@pytest.mark.slow  # 15-50 s end to end: run with `pytest -m slow` (CI, time allowing)
def test_more_shapes_than_dynamos_default_limit_still_compile(tiny_model_cfg, tokenizer, data):
    """torch.compile falls back to eager after 8 recompilations of a frame; the run raises
    the limit to its own number of shapes, so every batch runs compiled."""
    rows = data[0]
    lengths = [len(row["input_ids"]) for row in rows]
    in_pairs = [list(range(i, i + 2)) for i in range(0, len(rows), 2)]
    shapes = batch_shapes(lengths, in_pairs, 1)
    assert shapes > 8
    compiled_graphs.clear()
    one = CompileConfig(enabled=True, pad_multiple=1, backend="counted_aot_eager")
    model = fresh_model(tiny_model_cfg, tokenizer)
    logits = predict(model, rows, 2, 0, CPU, compile_settings=one)
    assert len(compiled_graphs) == shapes
    np.testing.assert_allclose(logits, predict(model, rows, 2, 0, CPU), rtol=0, atol=1e-5)


def test_padding_share_counts_the_padded_positions():
    lengths = [3, 5, 8, 2]
    batches = [[0, 1], [2, 3]]  # widths 5 and 8; bucketed to 8: 8 and 8
    assert padding_share(lengths, batches, 1) == (10 + 16 - 18) / 26
    assert padding_share(lengths, batches, 8) == (16 + 16 - 18) / 32
    assert padding_share(lengths, [], 8) == 0.0
