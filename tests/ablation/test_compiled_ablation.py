"""The compiled path (the `compile` setting) of the ablation sweep and of head importance on
CPU, backend `aot_eager` (graph capture without code generation; inductor takes minutes per
graph on 2 CPU cores): compiled logits and scores equal the eager ones within float32
rounding (padded batches change the order of some sums), and each layer compiles once per
padded input shape: neither another ablation, another pruning step nor another batch of the
same shape compiles again."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.ablation.importance import head_importance, pruning_curve
from pipeline.ablation.sweep import Ablation, head_ablations, layer_ablations, sweep
from pipeline.attention.engine import attach
from pipeline.attention.layerwise import Layerwise
from pipeline.core.schema import CompileConfig, load_task
from tests.support.ablation_models import SHAPE, seven_rows, strong_classifier
from tests.support.compile_counting import counting_backend, fresh_compilations

TOLERANCE = 1e-5  # logits and normalised importance, compiled vs eager (float32)
COMPILED, compiled_graphs = counting_backend("graph_counting_aot_eager")
LABELS = np.array([0, 1, 1, 0, 1, 0, 0])


@pytest.fixture(autouse=True)
def fresh():
    """No graph left from another test; recompiling past the limit fails."""
    with fresh_compilations(compiled_graphs):
        yield


def fresh_layerwise(tiny_model_cfg, tokenizer) -> Layerwise:
    return Layerwise.of(attach(strong_classifier(tiny_model_cfg, tokenizer)))


def run_sweep(layerwise, rows, ablations, mode, compile_settings=None):
    return sweep(
        layerwise, rows, ablations, mode=mode, pad_id=0, batch_size=3, ablations_per_pass=3,
        progress=False, compile_settings=compile_settings,
    )  # fmt: skip


@pytest.mark.slow  # torch.compile on the CPU, 15-40 s; quick compiled checks stay in the default
@pytest.mark.parametrize("mode", ["uniform", "zero"])
def test_compiled_sweep_equals_eager_within_rounding(tiny_model_cfg, tokenizer, mode):
    rows, ablations = seven_rows(), head_ablations(SHAPE) + layer_ablations(SHAPE)
    eager = run_sweep(fresh_layerwise(tiny_model_cfg, tokenizer), rows, ablations, mode)
    layerwise = fresh_layerwise(tiny_model_cfg, tokenizer)
    padded = run_sweep(layerwise, rows, ablations, mode, COMPILED)
    assert compiled_graphs  # it really ran compiled
    np.testing.assert_allclose(padded.baseline, eager.baseline, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(padded.logits, eager.logits, rtol=0, atol=TOLERANCE)
    # the ablations change the logits far beyond the tolerance, so the match above means something
    assert np.abs(eager.logits - eager.baseline).max() > 1000 * TOLERANCE


@pytest.mark.slow  # torch.compile on the CPU, 15-40 s; quick compiled checks stay in the default
def test_a_sweep_compiles_once_per_shape_not_per_ablation_or_batch(tiny_model_cfg, tokenizer):
    rows = seven_rows()  # lengths 7, 14, 5, 11, 9, 14, 6: padded to 8 or 16
    first = [Ablation(0, 0), Ablation(1, 2)]
    two_batches = [rows[1]] * 3 + [rows[0]] * 3  # one batch of each padded shape [3, 16], [3, 8]
    run_sweep(fresh_layerwise(tiny_model_cfg, tokenizer), two_batches, first, "uniform", COMPILED)
    per_shapes = len(compiled_graphs)
    assert per_shapes > 0
    torch._dynamo.reset()
    compiled_graphs.clear()
    layerwise = fresh_layerwise(tiny_model_cfg, tokenizer)
    run_sweep(layerwise, rows * 3, first, "uniform", COMPILED)  # 7 batches of 6 lengths
    assert len(compiled_graphs) == per_shapes
    # a whole layer and another head, in the same pass sizes, on twice the batches:
    # nothing compiles again (a mask is an input, whatever it holds)
    run_sweep(layerwise, rows * 6, [Ablation(0), Ablation(1, 1)], "uniform", COMPILED)
    assert len(compiled_graphs) == per_shapes


def test_compiled_importance_equals_eager_and_pruning_never_recompiles(tiny_model_cfg, tokenizer):
    rows, task = seven_rows(), load_task("mrpc")
    eager_curve, eager_first = pruning_curve(
        fresh_layerwise(tiny_model_cfg, tokenizer), rows, LABELS, task, pad_id=0, step=0.25,
        batch_size=3, progress=False,
    )  # fmt: skip
    layerwise = fresh_layerwise(tiny_model_cfg, tokenizer)
    curve, first = pruning_curve(
        layerwise, rows, LABELS, task, pad_id=0, step=0.25, batch_size=3, progress=False,
        compile_settings=COMPILED,
    )  # fmt: skip
    np.testing.assert_allclose(first, eager_first, rtol=0, atol=TOLERANCE)
    assert curve["accuracy"].tolist() == eager_curve["accuracy"].tolist()
    graphs = len(compiled_graphs)
    assert graphs > 0
    pruned = torch.zeros(SHAPE, dtype=torch.bool)
    pruned[0, 1] = pruned[1, 3] = True  # other gates: inputs, not constants in the graphs
    head_importance(layerwise, rows, LABELS, task, pad_id=0, pruned=pruned, batch_size=3)
    assert len(compiled_graphs) == graphs


def test_compile_off_compiles_nothing(tiny_model_cfg, tokenizer):
    off = CompileConfig(enabled=False, pad_multiple=8, backend="graph_counting_aot_eager")
    layerwise = fresh_layerwise(tiny_model_cfg, tokenizer)
    run_sweep(layerwise, seven_rows(), [Ablation(0, 0)], "zero", off)
    assert not compiled_graphs and layerwise.multiple == 1 and not layerwise.static
