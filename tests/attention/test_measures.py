"""Value-weighted norms, rollout and the token-type shares against hand computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from omegaconf import OmegaConf
from omegaconf.errors import ValidationError

from pipeline.analyses.analyze.settings import AnalyzeConfig
from pipeline.analyses.measures.settings import MeasuresConfig
from pipeline.attention.capture import capture_maps, capture_measures
from pipeline.attention.dump_attention import dump_task, tokenize_examples
from pipeline.attention.engine import HeadControl, attach
from pipeline.attention.measures import measure_maps, measure_path, measure_store, row_shares
from pipeline.attention.rollout import cls_rollout, residual_attention, rollout
from pipeline.attention.store import AttentionStore, TokenInfo
from pipeline.attention.store_writer import write_attention
from pipeline.clark.heads import analyse_heads
from pipeline.clark.relations import predict_heads
from pipeline.clark.stream import stream_word_maps
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.schema import Variant, load_task, typed
from pipeline.data.encoding import collate
from pipeline.extensions.measure_comparison import (
    TOKEN_TYPES,
    flat_metrics,
    is_punctuation,
    received_shares,
    received_table,
    special_retained,
)
from pipeline.kovaleva.analyze import analyze_task
from pipeline.kovaleva.formulas import head_cosine
from pipeline.models.loading import load_classifier
from tests.support.builders import group_settings, tiny_bert

LENGTHS = [7, 4, 6]


@pytest.fixture(scope="module")
def model():
    return attach(tiny_bert())


@pytest.fixture(scope="module")
def encodings():
    generator = torch.Generator().manual_seed(1)
    return [
        {"input_ids": torch.randint(5, 40, (n,), generator=generator).tolist()} for n in LENGTHS
    ]


def hand_norms(model, encodings) -> list[torch.Tensor]:
    """N[l, h, i, j] = alpha * ||(x_j W_V^h + b_V^h) W_O^h|| from the layers' inputs (hooks),
    the modules' weights and the captured weights, per example [L, H, n, n]."""
    layers = model.bert.encoder.layer
    inputs: dict[int, torch.Tensor] = {}
    hooks = [
        layer.attention.self.register_forward_hook(
            lambda module, args, out, i=i: inputs.__setitem__(i, args[0]), with_kwargs=False
        )
        for i, layer in enumerate(layers)
    ]
    control = HeadControl(capture=range(len(layers)))
    with torch.no_grad():
        model(**collate(encodings, 0), head_control=control)
    for hook in hooks:
        hook.remove()
    heads = model.config.num_attention_heads
    size = model.config.hidden_size // heads
    per_layer = []
    for i, layer in enumerate(layers):
        x = inputs[i]  # [B, T, hidden]
        v = layer.attention.self.value(x)  # [B, T, H*D], bias included
        w_o = layer.attention.output.dense.weight  # [hidden, H*D]
        f = torch.stack(
            [v[..., h * size : (h + 1) * size] @ w_o[:, h * size : (h + 1) * size].T
             for h in range(heads)],
            dim=1,
        )  # fmt: skip  # [B, H, T, hidden]
        per_layer.append(control.maps[i] * f.norm(dim=-1)[:, :, None, :])  # [B, H, T, T]
    stacked = torch.stack(per_layer, dim=1)  # [B, L, H, T, T]
    return [m[..., :n, :n] for m, n in zip(stacked, LENGTHS, strict=True)]


def test_norms_equal_a_hand_computation(model, encodings):
    captured = capture_measures(model, encodings, 0, ("weights", "norms"))
    expected = hand_norms(model, encodings)
    for got, want, weights in zip(captured["norms"], expected, captured["weights"], strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)
        assert not torch.allclose(got, weights)  # norms are not the weights


def test_weights_are_unchanged_by_capturing_norms(model, encodings):
    alone = capture_maps(model, encodings, 0)
    both = capture_measures(model, encodings, 0, ("weights", "norms"))["weights"]
    for first, second in zip(alone, both, strict=True):
        torch.testing.assert_close(first, second)


def test_norms_of_a_zero_disabled_head_are_zero(model, encodings):
    from pipeline.attention.norms import value_grams

    disabled = torch.zeros(2, 3, dtype=torch.bool)
    disabled[1, 2] = True
    control = HeadControl(
        capture=[0, 1], value_grams=value_grams(model, [0, 1]), disabled=disabled, mode="zero"
    )
    with torch.no_grad():
        model(**collate(encodings, 0), head_control=control)
    assert float(control.norms[1][:, 2].abs().max()) == 0.0
    assert float(control.norms[1][:, :2].abs().max()) > 0.0


def test_unknown_measure_fails_clearly(model, encodings):
    with pytest.raises(PipelineError, match="attention measures"):
        capture_measures(model, encodings, 0, ("attention",))


def test_rollout_of_identity_maps_is_the_identity():
    maps = np.broadcast_to(np.eye(5), (3, 4, 5, 5))  # [L, H, n, n]
    np.testing.assert_allclose(rollout(maps), np.broadcast_to(np.eye(5), (3, 5, 5)))
    np.testing.assert_allclose(cls_rollout(maps), np.broadcast_to(np.eye(5)[0], (3, 5)))


def test_rollout_multiplies_residual_maps_layer_by_layer():
    rng = np.random.default_rng(0)
    maps = rng.random((3, 2, 4, 4))
    maps /= maps.sum(-1, keepdims=True)
    mixed = [(0.5 * m.mean(0) + 0.5 * np.eye(4)) for m in maps]  # rows already sum to 1
    expected = mixed[2] @ mixed[1] @ mixed[0]
    np.testing.assert_allclose(residual_attention(maps), np.stack(mixed))
    np.testing.assert_allclose(rollout(maps)[2], expected)
    np.testing.assert_allclose(rollout(maps).sum(-1), 1.0)


def test_received_shares_by_type():
    maps = np.zeros((1, 2, 3, 3))
    maps[0, 0, :, 0] = 2.0  # head 0: every query all on [CLS] (unnormalised, as norms are)
    maps[0, 1, :, 2] = 1.0  # head 1: every query all on the last token
    types = np.array([0, 2, 1])  # [CLS], punctuation, [SEP]
    shares = received_shares(maps, types)  # [1, T]
    np.testing.assert_allclose(shares[0], [0.5, 0.5, 0.0, 0.0])
    assert TOKEN_TYPES[:2] == ("[CLS]", "[SEP]")


def test_measure_maps_of_one_example():
    rng = np.random.default_rng(0)
    weights = rng.random((2, 3, 4, 4))
    weights /= weights.sum(-1, keepdims=True)
    norms = weights * rng.random((2, 3, 1, 4)) * 5  # alpha ||f(x_j)||
    captured = {"weights": weights, "norms": norms}
    np.testing.assert_allclose(measure_maps(captured, "weights"), weights, rtol=1e-6)
    shares = measure_maps(captured, "norms")  # rows rescaled to sum to 1
    np.testing.assert_allclose(shares.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(shares * norms.sum(-1, keepdims=True), norms, rtol=1e-5)
    rolled = measure_maps(captured, "rollout")
    assert rolled.shape == (2, 1, 4, 4)
    np.testing.assert_allclose(rolled[:, 0], rollout(weights), rtol=1e-5)
    with pytest.raises(PipelineError, match="attention measure"):
        measure_maps(captured, "gradients")


def test_punctuation_pieces():
    assert is_punctuation(".") and is_punctuation("##,") and is_punctuation("--")
    assert not is_punctuation("a.") and not is_punctuation("##") and not is_punctuation("[SEP]")
    assert is_punctuation("\u0120,") and is_punctuation("\u2581.")  # BPE's Ġ, SentencePiece's ▁
    assert not is_punctuation("\u0120") and not is_punctuation("\u2581a")


def test_received_table_numbers_layers_from_one_and_names_metrics():
    settings = MeasuresConfig(
        num_examples=None, batch_size=2, measures=["weights", "norms"], bootstrap_resamples=50
    )
    shares = np.random.default_rng(0).random((5, 2, 3, len(TOKEN_TYPES)))  # [N, M, L, T]
    table = received_table(shares, settings, "rte", seed=0)
    assert sorted(table["layer"].unique()) == [1, 2, 3]
    row = table[(table.measure == "norms") & (table.layer == 3) & (table.token_type == "[SEP]")]
    assert float(row["received"].iloc[0]) == pytest.approx(shares[:, 1, 2, 1].mean())
    assert (table["ci_low"] <= table["received"]).all()
    assert (table["received"] <= table["ci_high"]).all()
    metrics = flat_metrics(table)
    assert metrics["sep.norms.L3"] == pytest.approx(shares[:, 1, 2, 1].mean(), abs=1e-6)
    assert "cls.weights.L1" in metrics and "punct.norms.L2" in metrics


def test_special_tokens_retained_under_norms():
    settings = MeasuresConfig(
        num_examples=None, batch_size=2, measures=["norms", "weights"], bootstrap_resamples=200
    )
    shares = np.zeros((6, 2, 3, len(TOKEN_TYPES)))  # [N, M, L, T]
    shares[:, 1, :, 0] = 0.4  # weights: [CLS] 0.4 and [SEP] 0.2 in every layer
    shares[:, 1, :, 1] = 0.2
    shares[:, 0, :, 0] = 0.1  # norms: [CLS] 0.1 and [SEP] 0.05
    shares[:, 0, :, 1] = 0.05
    retained = special_retained(shares, settings, seed=0)
    assert retained["special_norms_over_weights"] == pytest.approx(0.25)
    assert retained["special_norms_over_weights_ci_low"] == pytest.approx(0.25)
    assert retained["special_norms_over_weights_ci_high"] == pytest.approx(0.25)
    only_weights = MeasuresConfig(None, 2, ["weights"], 10)
    assert special_retained(shares[:, 1:], only_weights, seed=0) == {}


def test_the_schema_rejects_an_unknown_measure():
    node = OmegaConf.create(
        {"num_examples": 4, "batch_size": 2, "measures": ["grad"], "bootstrap_resamples": 10}
    )
    with pytest.raises(ValidationError, match="full_key: measures"):
        typed(MeasuresConfig, node)


# --- the dump's measures and the `measure` setting of the analyses ---------------------------

PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on a mat."),
    ("He said no, twice.", "He refused the offer."),
    ("Stocks fell on Monday.", "The report came out."),
]


@pytest.fixture(scope="module")
def dumped(tmp_path_factory, tiny_model_cfg, tokenizer):
    """Weights and norms of two tiny random classifiers on three MRPC-like pairs, dumped with
    dump_attention.measures = [weights, norms]; also the models and the examples."""
    models = {
        name: load_classifier(tiny_model_cfg, tokenizer, num_labels=2, seed=seed)
        for name, seed in (("finetuned", 1), ("pretrained", 2))
    }
    frame = pd.DataFrame(PAIRS, columns=["sentence1", "sentence2"])
    frame = frame.assign(idx=[0, 1, 2], label=[0, 1, 0])
    path = tmp_path_factory.mktemp("dump") / "mrpc.parquet"
    settings = group_settings(
        "dump_attention",
        {"num_examples": 3, "batch_size": 2, "row_group_mib": 1, "measures": ["weights", "norms"]},
    )
    dump_task(
        models, tokenizer, load_task("mrpc"), frame, path, settings,
        max_length=64, model_id="tiny_random", config_hash="test", seed=0,
    )  # fmt: skip
    examples = tokenize_examples(tokenizer, load_task("mrpc"), frame, 64)
    return AttentionStore(path, expect_model="tiny_random"), models, examples


def test_dump_stores_norms_beside_the_weights(dumped, tokenizer):
    store, models, examples = dumped
    norms = AttentionStore(measure_path(store.path, "norms"), expect_model="tiny_random")
    assert (store.measure, norms.measure) == ("weights", "norms")
    assert norms.path.name == "mrpc.norms.parquet" and norms.variants == store.variants
    captured = capture_measures(
        attach(models["finetuned"].eval()), [e.row for e in examples], tokenizer.pad_token_id,
        ("weights", "norms"),
    )  # fmt: skip
    for example, want in zip(examples, captured["norms"], strict=True):
        got = norms.maps("finetuned", "mrpc", examples=[example.example_id])[example.example_id]
        np.testing.assert_allclose(got, want.numpy(), rtol=2e-3, atol=1e-3)  # float16 store
    only_norms = group_settings(
        "dump_attention",
        {"num_examples": 1, "batch_size": 1, "row_group_mib": 1, "measures": ["norms"]},
    )
    path = store.path.with_name("norms_only.parquet")
    with pytest.raises(PipelineError, match="lacks weights"):
        dump_task(
            models, tokenizer, load_task("mrpc"), pd.DataFrame(), path, only_norms,
            max_length=64, model_id="tiny_random", config_hash="test", seed=0,
        )  # fmt: skip
    assert not path.exists()


def hand_cosines(store, transform) -> np.ndarray:
    """Fig. 5 by hand: mean over examples of the per-head cosine of transformed maps [L, H]."""
    before, after = store.maps("pretrained", "mrpc"), store.maps("finetuned", "mrpc")
    return np.mean([head_cosine(transform(before[e]), transform(after[e])) for e in before], 0)


@pytest.mark.parametrize("measure", ["weights", "norms", "rollout"])
def test_the_measure_setting_changes_what_kovaleva_reads(dumped, measure):
    store = dumped[0]
    node = OmegaConf.load(CONF_DIR / "analyze" / "default.yaml")
    node.measure = measure
    result = analyze_task(store, "mrpc", typed(AnalyzeConfig, node))
    norms = AttentionStore(measure_path(store.path, "norms"))
    source, transform = {
        "weights": (store, lambda maps: maps),
        "norms": (norms, row_shares),
        "rollout": (store, lambda maps: rollout(maps)[:, None]),
    }[measure]
    expected = hand_cosines(source, transform)  # [L, H], H = 1 for rollout
    got = result.cosine.pivot(index="layer", columns="head", values="cosine").to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert result.cosine["head"].nunique() == (1 if measure == "rollout" else 4)
    if measure != "weights":  # the measure changes the numbers
        assert not np.allclose(expected[:, :1], hand_cosines(store, lambda m: m)[:, :1])


def test_clark_heads_read_the_measured_store(dumped):
    store = dumped[0]
    settings = group_settings(
        "clark_heads",
        {"variant": Variant.finetuned, "num_examples": None, "bootstrap_resamples": 1000},
    )
    reports = {
        m: analyse_heads(measure_store(store, m), "mrpc", 0, settings)
        for m in ("weights", "norms", "rollout")
    }
    norms = AttentionStore(measure_path(store.path, "norms")).maps("finetuned", "mrpc")
    to_cls = np.mean([row_shares(m)[..., 0].mean(-1) for m in norms.values()], 0)  # [L, H]
    table = reports["norms"].targets.query("target == 'cls'")
    np.testing.assert_allclose(
        table.pivot(index="layer", columns="head", values="attention").to_numpy(), to_cls,
        rtol=1e-4,
    )  # fmt: skip
    assert set(reports["rollout"].entropy["head"]) == {0}
    weights_cls = reports["weights"].targets.query("target == 'cls'")["attention"].to_numpy()
    assert not np.allclose(weights_cls, table["attention"].to_numpy())
    with pytest.raises(PipelineError, match="unknown attention measure"):
        measure_store(store, "gradients")


def test_norms_without_a_norms_store_fail_clearly(tmp_path):
    info = TokenInfo(["[CLS]", "a", "[SEP]"], np.zeros(3, int), np.array([-1, 0, -1]),
                     np.zeros((3, 2), int), ("a",))  # fmt: skip
    maps = np.full((1, 1, 3, 3), 1 / 3, dtype=np.float32)
    write_attention(tmp_path / "rte.parquet", [("finetuned", "rte", 0, maps, info)],
                    model_id="m", num_layers=1, num_heads=1, config_hash="t")  # fmt: skip
    with pytest.raises(PipelineError, match=r"dump_attention.measures=\[weights,norms\]"):
        measure_store(AttentionStore(tmp_path / "rte.parquet"), "norms")


def test_word_maps_stream_the_measure(dumped, tokenizer):
    model = attach(dumped[1]["finetuned"].eval())
    sentences = [["The", "cat", "sat", "."], ["Dogs", "bark", "loudly", "!"]]
    streamed = {
        m: dict(stream_word_maps(model, tokenizer, sentences, 2, 64, measure=m))
        for m in ("weights", "norms", "rollout")
    }
    plain = dict(stream_word_maps(model, tokenizer, sentences, 2, 64))
    for index in plain:
        torch.testing.assert_close(streamed["weights"][index], plain[index])
        norms, rolled = streamed["norms"][index], streamed["rollout"][index]
        assert norms.shape == plain[index].shape and rolled.shape[1] == 1
        torch.testing.assert_close(norms.sum(-1), torch.ones(norms.shape[:-1]))
        assert not torch.allclose(norms, plain[index])
        predicted = predict_heads(norms)  # dependency heads from norms: [2, L, H, w]
        assert predicted.shape == (2, *norms.shape[:2], norms.shape[-1] - 2)
