"""The dump_attention stage end to end on the micro profile (tiny random BERT)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from torch._dynamo import register_backend

from pipeline.attention.dump_attention import dump_task, tokenize_examples
from pipeline.attention.engine import HeadControl, attach
from pipeline.attention.store import AttentionStore
from pipeline.core.errors import PipelineError
from pipeline.core.schema import load_task
from pipeline.data.encoding import collate
from pipeline.data.sampling import evaluation_sample
from pipeline.models.loading import load_classifier, load_finetuned
from stages import dump_attention
from tests.support.builders import group_settings

SENTENCES = [
    ("The cat sat on the mat.", "A cat was sitting on a mat."),
    ("Stocks fell sharply on Monday after the report.", "The report came out."),
    ("He said no.", "He refused the offer, politely but firmly, after a long pause."),
    ("Yes.", "No."),
] * 6  # 24 rows; the micro profile dumps the first 16


@pytest.fixture
def prepared(tmp_path, tokenizer, micro_stage):
    """Prepared MRPC dev rows and a saved (untrained) tiny classifier."""
    frame = pd.DataFrame(SENTENCES, columns=["sentence1", "sentence2"])
    frame.insert(0, "idx", np.arange(100, 100 + len(frame)))
    frame["label"] = 1
    (tmp_path / "data/glue/mrpc").mkdir(parents=True)
    frame.to_parquet(tmp_path / "data/glue/mrpc/validation.parquet")
    stage = micro_stage("mrpc")
    model = load_classifier(stage.settings("model"), tokenizer, num_labels=2, seed=7)
    model.save_pretrained(tmp_path / "outputs/models/mrpc" / stage.seed_folder)
    return tmp_path, frame


def test_dump_stage_writes_every_map_of_both_variants(prepared, tokenizer, micro_stage):
    root, frame = prepared
    stage = micro_stage("mrpc")
    dump_attention.run(stage)
    dumped = root / "outputs/attention/mrpc/seed42.parquet"
    store = AttentionStore(dumped, expect_model="tiny_random")
    assert store.variants == ["finetuned", "pretrained"]
    assert (store.num_layers, store.num_heads) == (2, 4)
    sample = evaluation_sample(frame, load_task("mrpc"), 16, stage.cfg.seed)
    ids = sample["idx"].tolist()  # a seeded sample of the rows, not the first 16
    assert len(ids) == 16 and ids != list(range(100, 116))
    assert store.example_ids("pretrained", "mrpc") == ids
    assert store.example_ids("finetuned", "mrpc") == ids

    # the fine-tuned variant's maps are what the saved model computes, one example at a time
    model = attach(load_finetuned(root / "outputs/models/mrpc" / stage.seed_folder).eval())
    examples = tokenize_examples(tokenizer, load_task("mrpc"), sample, 64)
    stored = store.maps("finetuned", "mrpc")
    for example in examples[:4]:
        control = HeadControl(capture=range(2))
        with torch.no_grad():
            model(**collate([example.row], tokenizer.pad_token_id), head_control=control)
        want = torch.stack([control.maps[layer][0] for layer in range(2)]).numpy()
        np.testing.assert_allclose(stored[example.example_id], want, atol=1e-3, rtol=0)
        assert store.tokens("mrpc", example.example_id).tokens == example.tokens.tokens
    pretrained = store.maps("pretrained", "mrpc", layers=[1])
    for example_id, maps in pretrained.items():
        n = len(store.tokens("mrpc", example_id))
        np.testing.assert_allclose(maps.sum(-1), np.ones((1, 4, n)), atol=3e-3)
        assert not np.allclose(maps, stored[example_id][[1]], atol=1e-3)

    metrics = json.loads((root / "outputs/metrics/dump_attention/mrpc/seed42.json").read_text())
    assert metrics["examples"] == 16
    assert 0 < metrics["bytes_vs_raw_float16"] < 1
    assert set(metrics) == {"examples", "mean_tokens", "file_mib", "bytes_vs_raw_float16"}


def test_dump_stage_without_finetuned_model_says_what_to_run(prepared, micro_stage):
    root, _ = prepared
    (root / "outputs/models/mrpc/seed42/config.json").unlink()  # the primary seed
    with pytest.raises(PipelineError, match="run `dvc repro finetune`"):
        dump_attention.run(micro_stage("mrpc"))
    assert not (root / "outputs/attention/mrpc/seed42.parquet").exists()


def test_dump_task_refuses_models_of_different_shapes(tmp_path, tokenizer, micro_stage):
    stage = micro_stage("mrpc")
    small = load_classifier(stage.settings("model"), tokenizer, num_labels=2, seed=7)
    model = stage.settings("model")
    wider = replace(model, random_config={**model.random_config, "num_attention_heads": 2})
    other = load_classifier(wider, tokenizer, num_labels=2, seed=7)
    frame = pd.DataFrame(SENTENCES[:2], columns=["sentence1", "sentence2"])
    frame = frame.assign(idx=[0, 1], label=[0, 1])
    settings = stage.settings("dump_attention")
    path = tmp_path / "mrpc.parquet"
    with pytest.raises(PipelineError, match=r"differ in shape .*fine-tune it again under these"):
        dump_task(
            {"finetuned": small, "pretrained": other}, tokenizer, load_task("mrpc"), frame,
            path, settings, max_length=64, model_id="tiny_random", config_hash="test", seed=0,
        )  # fmt: skip
    assert not path.exists()


def test_dump_task_writes_the_variants_in_sorted_order(tmp_path, tokenizer, micro_stage):
    stage = micro_stage("mrpc")
    models = {
        name: load_classifier(stage.settings("model"), tokenizer, num_labels=2, seed=seed)
        for name, seed in (("zeta", 1), ("alpha", 2))
    }
    frame = pd.DataFrame(SENTENCES[:5], columns=["sentence1", "sentence2"])
    frame.insert(0, "idx", [10, 11, 12, 13, 14])  # prepared splits are sorted by idx
    frame["label"] = [0, 0, 0, 1, 1]
    settings = group_settings(
        "dump_attention", {"num_examples": 3, "batch_size": 2, "row_group_mib": 1}
    )
    metrics = dump_task(
        models, tokenizer, load_task("mrpc"), frame, tmp_path / "mrpc.parquet", settings,
        max_length=64, model_id="tiny_random", config_hash="test", seed=3,
    )  # fmt: skip
    store = AttentionStore(tmp_path / "mrpc.parquet", expect_model="tiny_random")
    assert store.variants == ["alpha", "zeta"]
    sampled = store.example_ids("alpha", "mrpc")  # a seeded sample, stratified by label
    assert sampled == evaluation_sample(frame, load_task("mrpc"), 3, seed=3)["idx"].tolist()
    assert sorted(frame.set_index("idx").loc[sampled, "label"]) == [0, 0, 1]
    assert metrics["examples"] == 3


stage_graphs: list[int] = []


@register_backend
def dump_stage_counting_aot_eager(graph: torch.fx.GraphModule, example_inputs):
    """aot_eager, counting the graphs it compiles."""
    stage_graphs.append(len(example_inputs))
    return torch._dynamo.lookup_backend("aot_eager")(graph, example_inputs)


def test_dump_stage_honours_the_compile_setting(prepared, micro_stage):
    """compile.enabled reaches the dump: the compiled stage (aot_eager, lengths padded to
    multiples of 8) compiles, and its store holds the eager one's maps within one float16
    step below 1."""
    root, _ = prepared
    stores, graphs = {}, {}
    for enabled in (False, True):
        stage_graphs.clear()
        settings = {"compile.enabled": enabled, "compile.backend": "dump_stage_counting_aot_eager"}
        torch._dynamo.reset()
        with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
            dump_attention.run(micro_stage("mrpc", settings))
        graphs[enabled] = len(stage_graphs)
        dumped = root / "outputs/attention/mrpc/seed42.parquet"
        stores[enabled] = dumped.rename(dumped.with_suffix(f".{enabled}.parquet"))
    torch._dynamo.reset()
    assert graphs[False] == 0 and graphs[True] > 0
    eager = AttentionStore(stores[False], expect_model="tiny_random")
    padded = AttentionStore(stores[True], expect_model="tiny_random")
    for variant in ("finetuned", "pretrained"):
        expected = dict(eager.iter_maps(variant, "mrpc"))
        got = dict(padded.iter_maps(variant, "mrpc"))
        assert got.keys() == expected.keys()
        for example_id, maps in got.items():
            np.testing.assert_allclose(maps, expected[example_id], rtol=0, atol=2**-10)
