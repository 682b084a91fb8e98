"""The compiled path (the `compile` setting) of the attention dump on CPU, backend
`aot_eager` (graph capture without code generation): compiled maps equal the eager ones
within float32 rounding before the store's float16, and each model compiles once per padded
batch shape, not once per batch."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.attention.capture import capture_measures
from pipeline.attention.dump_attention import dump_task, tokenize_examples, window_batches
from pipeline.attention.engine import attach
from pipeline.attention.store import AttentionStore
from pipeline.core.schema import load_task
from pipeline.models.compilation import batch_shapes, compiled
from pipeline.models.loading import load_classifier
from tests.support.ablation_models import seven_rows
from tests.support.builders import group_settings
from tests.support.compile_counting import counting_backend, fresh_compilations

MAPS_TOLERANCE = 1e-6  # float32 maps and norms, compiled vs eager
STORE_TOLERANCE = 2**-10  # one float16 step below 1: a rounding may land on either side
COMPILED, dump_graphs = counting_backend("dump_counting_aot_eager")
SENTENCES = [
    ("The cat sat on the mat.", "A cat was sitting on a mat."),
    ("Stocks fell sharply on Monday after the report.", "The report came out."),
    ("He said no.", "He refused the offer, politely but firmly, after a long pause."),
    ("Rain.", "It rained all day long in the city and nobody went out."),
    ("Birds sing at dawn.", "At dawn the birds sing."),
    ("A short one.", "Another."),
    ("The committee approved the budget on Friday.", "The budget was approved."),
]


@pytest.fixture(autouse=True)
def fresh():
    """No graph left from another test; recompiling past the limit fails."""
    with fresh_compilations(dump_graphs):
        yield


def test_compiled_capture_equals_eager_within_rounding(tiny_model_cfg, tokenizer):
    model = attach(load_classifier(tiny_model_cfg, tokenizer, num_labels=2, seed=0).eval())
    rows = seven_rows()
    measures = ("weights", "norms")
    eager = capture_measures(model, rows, 0, measures)
    forward = compiled(model, COMPILED, 1)
    padded = capture_measures(model, rows, 0, measures, forward=forward, multiple=8)
    assert dump_graphs  # it really ran compiled, on a batch padded from 14 to 16
    for measure in measures:
        for a, b, row in zip(eager[measure], padded[measure], rows, strict=True):
            n = len(row["input_ids"])
            assert a.shape == b.shape == (2, 4, n, n)
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=0, atol=MAPS_TOLERANCE)


def test_compiled_dump_matches_eager_and_compiles_once_per_shape(tmp_path, tokenizer, micro_stage):
    stage = micro_stage("mrpc")
    models = {
        name: load_classifier(stage.settings("model"), tokenizer, num_labels=2, seed=seed)
        for name, seed in (("finetuned", 1), ("pretrained", 2))
    }
    frame = pd.DataFrame(SENTENCES, columns=["sentence1", "sentence2"])
    frame.insert(0, "idx", range(len(SENTENCES)))
    frame["label"] = [0, 1, 0, 1, 0, 1, 0]
    settings = group_settings(
        "dump_attention", {"num_examples": 7, "batch_size": 2, "row_group_mib": 1}
    )
    task, paths = load_task("mrpc"), {}
    for name, compile_settings in (("eager", None), ("compiled", COMPILED)):
        paths[name] = tmp_path / name / "mrpc.parquet"
        paths[name].parent.mkdir()
        dump_task(
            models, tokenizer, task, frame, paths[name], settings, max_length=64,
            model_id="tiny_random", config_hash="test", seed=3, compile_settings=compile_settings,
        )  # fmt: skip
    examples = tokenize_examples(tokenizer, task, frame, 64)
    lengths, batches = window_batches(examples, settings.batch_size)
    shapes = batch_shapes(lengths, batches, COMPILED.pad_multiple)
    assert shapes < len(batches)  # bucketing: batches share shapes
    # once per padded shape: the second model, of the same architecture, reuses the graphs
    # (its weights are graph inputs)
    assert len(dump_graphs) == shapes
    eager = AttentionStore(paths["eager"], expect_model="tiny_random")
    padded = AttentionStore(paths["compiled"], expect_model="tiny_random")
    for variant in models:
        expected = dict(eager.iter_maps(variant, "mrpc"))
        got = dict(padded.iter_maps(variant, "mrpc"))
        assert got.keys() == expected.keys() and len(got) == 7
        for example_id, maps in got.items():
            assert maps.shape == expected[example_id].shape
            np.testing.assert_allclose(maps, expected[example_id], rtol=0, atol=STORE_TOLERANCE)
