"""Clark et al.'s analyses end to end: heads, coreference and syntax on hand-built stores and
trees, and their stages on the micro profile."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pipeline.analyses.clark_coref.settings import ClarkCorefConfig
from pipeline.analyses.clark_syntax.settings import ClarkSyntaxConfig
from pipeline.attention.engine import attach
from pipeline.attention.store import AttentionStore, TokenInfo, store_path
from pipeline.attention.store_writer import write_attention
from pipeline.clark.coref import analyse_coref
from pipeline.clark.gap import (
    read_gap_sample,
)
from pipeline.clark.heads import analyse_heads, headline
from pipeline.clark.relations import (
    ALL,
)
from pipeline.clark.syntax import analyse_syntax
from pipeline.clark.ud import (
    Sentence,
)
from pipeline.core.errors import PipelineError
from pipeline.core.head_names import head_name
from pipeline.models.loading import load_encoder
from tests.support.builders import drawn, group_settings
from tests.support.clark_inputs import (
    GAP_TSV,
    TOKENS,
    TREE,
    WORD_IDS,
    random_tree,
)


def write_hand_built_store(path, model_id: str) -> None:
    """Three examples (TOKENS) of 2 layers x 2 heads. Layer 1: head 0 attends to [CLS], head 1
    to the previous token ([CLS] to itself); layer 2: both heads attend to [CLS]."""
    n = len(TOKENS)
    info = TokenInfo(
        TOKENS, np.array([0, 0, 0, 0, 1, 1]), np.array(WORD_IDS), np.zeros((n, 2), int), ("a.", "b")
    )
    to_cls = np.zeros((n, n), dtype=np.float32)
    to_cls[:, 0] = 1.0
    previous = np.eye(n, k=-1, dtype=np.float32)
    previous[0, 0] = 1.0
    maps = np.stack([np.stack([to_cls, previous]), np.stack([to_cls, to_cls])])  # [2, 2, n, n]
    write_attention(
        path,
        [("pretrained", "rte", i, maps, info) for i in range(3)],
        model_id=model_id,
        num_layers=2,
        num_heads=2,
        config_hash="test",
    )


def test_analyse_heads_returns_0_based_tables_and_1_based_metrics(tmp_path):
    write_hand_built_store(tmp_path / "rte.parquet", "m")
    settings = group_settings(
        "clark_heads", {"variant": "pretrained", "num_examples": 2, "bootstrap_resamples": 1000}
    )
    report = analyse_heads(AttentionStore(tmp_path / "rte.parquet"), "rte", 0, settings)
    assert report.examples == 2 and report.metrics["examples"] == 2
    for table in (report.targets, report.entropy, report.clusters):
        assert sorted(set(table["layer"])) == [0, 1] and sorted(set(table["head"])) == [0, 1]
    assert report.distances["head"].tolist() == ["L1-H1", "L1-H2", "L2-H1", "L2-H2"]
    assert report.distances.columns.tolist() == ["head", "L1-H1", "L1-H2", "L2-H1", "L2-H2"]
    distances = report.distances.set_index("head")
    assert distances.loc["L1-H1", "L2-H1"] == pytest.approx(0.0, abs=1e-4)  # both to [CLS]
    assert distances.loc["L1-H1", "L1-H2"] > 1.0
    layer_two_cls = report.targets.query("layer == 1 and target == 'cls'")["attention"]
    assert layer_two_cls.tolist() == pytest.approx([1.0, 1.0])
    margin = {k: v for k, v in report.metrics.items() if k.startswith("same_layer_margin")}
    sep = {k: v for k, v in report.metrics.items() if k.startswith("sep_attention.")}
    assert sorted(sep) == sorted(f"sep_attention.L{n}{end}" for n in (1, 2)
                                 for end in ("", "_ci_low", "_ci_high"))  # fmt: skip
    # layer 1: the previous-token head's "b" attends to the [SEP] before it (1 query of 6),
    # the [CLS] head never: 1/12; layer 2 attends to [CLS] alone
    assert sep["sep_attention.L1"] == pytest.approx(1 / 12)
    assert sep["sep_attention.L2"] == sep["sep_attention.L2_ci_high"] == 0.0
    # two layers are both middle ones: their mean, 1/24 to [SEP]; to any sink, layer 1's
    # [CLS] head 1 and its other head's 1/6 to [SEP] or "." (a sink each), layer 2 all [CLS]
    middle = {k: v for k, v in report.metrics.items() if k.split("_ci")[0].endswith("_middle")}
    assert middle["sep_middle"] == pytest.approx(1 / 24)
    assert middle["sep_middle"] < middle["sink_middle"] <= 1.0
    assert report.metrics == (
        headline(report.targets, report.entropy) | {"examples": 2} | margin | sep | middle
    )
    # same-layer pairs: L1-H1/L1-H2 apart, L2-H1/L2-H2 alike; across layers, half the pairs
    # are apart (L1-H2 with both of layer 2): both means are half the gap, the margin 0
    assert margin["same_layer_margin"] == pytest.approx(0.0, abs=1e-4)


def test_headline_numbers_the_peak_layer_from_one():
    targets = pd.DataFrame(
        {
            "layer": [0, 1, 2] * 5,
            "head": 0,
            "target": np.repeat(["cls", "sep", "punct", "previous", "next"], 3),
            "attention": [0.1, 0.2, 0.9, 0.5, 0.1, 0.1, 0.0, 0.3, 0.0, 0.6, 0.0, 0.0, 0, 0, 0.1],
        }
    )
    entropy = pd.DataFrame(
        {"layer": [0, 1, 2], "head": 0, "entropy": [1.0, 2.0, 3.0], "cls_entropy": [0, 0, 2.5]}
    ).assign(uniform=4.0)
    metrics = headline(targets, entropy)
    peaks = {t: metrics[f"{t}_peak_layer"] for t in ("cls", "sep", "punct", "previous", "next")}
    assert peaks == {"cls": 3, "sep": 1, "punct": 2, "previous": 1, "next": 3}
    assert metrics["cls_peak_layer_attention"] == 0.9
    assert metrics["cls_entropy_last_layer"] == 2.5 and metrics["entropy_mean"] == 2.0


def test_clark_heads_stage_on_a_hand_built_store(micro_stage):
    from stages import clark_heads

    stage = micro_stage("rte")
    write_hand_built_store(
        store_path(stage.upstream("attention"), "rte", stage.seed), stage.cfg.model.name
    )
    clark_heads.run(stage)
    seed = stage.seed_folder
    metrics = json.loads(stage.out("metrics", "clark_heads", "rte", f"{seed}.json").read_text())
    assert not [key for key in metrics if key.endswith("seconds")]
    # layer 1: head 1 gives [CLS] only its rows 0 ([CLS] itself) and 1 (previous); layer 2: all
    assert metrics["cls_peak_layer"] == 2 and metrics["cls_peak_layer_attention"] == 1.0
    assert metrics["previous_peak_layer"] == 1
    assert metrics["previous_peak_layer_attention"] == pytest.approx((1 / 6 + 5 / 6) / 2)
    assert metrics["examples"] == 3
    plots = stage.out("plots", "clark_heads", "rte", seed)
    clusters = pd.read_csv(plots / "clusters.csv")
    assert clusters.set_index(["layer", "head"])["behaviour"].to_dict() == {
        (1, 1): "cls",
        (1, 2): "previous",
        (2, 1): "cls",
        (2, 2): "cls",
    }
    for name in ("targets", "entropy"):
        table = pd.read_csv(plots / f"{name}.csv")
        assert sorted(set(table["layer"])) == [1, 2] and sorted(set(table["head"])) == [1, 2]
    assert pd.read_csv(plots / "distances.csv")["head"].iloc[-1] == "L2-H2"
    for name in ("targets", "entropy", "clusters"):
        figure = stage.out("figures", "clark_heads", "rte", seed, f"{name}.png")
        assert "(rte, pretrained tiny_random, 3 dev examples)" in drawn(figure)
        assert json.loads(figure.with_suffix(".json").read_text())["config"]["examples"] == 3


@pytest.fixture(scope="module")
def tiny_encoder(tiny_model_cfg, tokenizer):
    """The tiny random BERT (2 layers x 4 heads), attached to the engine."""
    return attach(load_encoder(tiny_model_cfg, tokenizer, seed=0).eval())


def test_analyse_coref_chooses_on_one_split_and_reports_on_the_other(
    tmp_path, tiny_encoder, tokenizer
):
    (tmp_path / "gap-development.tsv").write_text(GAP_TSV)
    examples = read_gap_sample(tmp_path, "development", None, seed=0)
    report = analyse_coref(tiny_encoder, tokenizer, examples, examples, coref(32), seed=0)
    assert len(report.heads) == 8
    assert sorted(set(report.heads["layer"])) == [0, 1]  # 0-based until written
    assert sorted(set(report.heads["head"])) == [0, 1, 2, 3]
    best = report.heads.loc[report.heads["select_accuracy"].idxmax()]
    assert report.metrics["best_head"] == head_name(best["layer"], best["head"])
    assert report.metrics["head_accuracy"] == best["report_accuracy"]
    assert report.heads["report_accuracy"].isin([0.0, 0.5, 1.0]).all()  # two report examples
    # Bob is nearer: wrong for "She" (Anna), right for "He" (Bob)
    assert report.comparison["nearest name"].estimate == 0.5
    assert report.metrics["nearest_baseline_accuracy"] == 0.5
    assert (report.select_examples, report.report_examples) == (2, 2)
    with pytest.raises(PipelineError, match="only 1 GAP report example fits in 32 pieces"):
        analyse_coref(tiny_encoder, tokenizer, examples, examples[:1], coref(32), seed=0)
    with pytest.raises(PipelineError, match="none of the 2 GAP select examples fits in 6"):
        analyse_coref(tiny_encoder, tokenizer, examples, examples, coref(6), seed=0)


def coref(max_length: int) -> ClarkCorefConfig:
    return group_settings(
        "clark_coref", {"max_length": max_length, "batch_size": 2, "bootstrap_resamples": 1000}
    )


def tiny_syntax_settings(word_vectors=None, resamples=1000) -> ClarkSyntaxConfig:
    return group_settings(
        "clark_syntax",
        {
            "ud.batch_size": 4, "ud.max_length": 32, "ud.max_offset": 2, "ud.min_count": 1,
            "probe.epochs": 2, "probe.batch_size": 4, "probe.learning_rate": 0.05,
            "probe.word_vectors": word_vectors, "bootstrap_resamples": resamples,
        },
    )  # fmt: skip


def is_share_of(value: float, count: int) -> bool:
    """True if `value` is k / `count` for a whole k from 0 to `count` (to written precision)."""
    hits = value * count
    return 0 <= round(hits) <= count and abs(hits - round(hits)) < 1e-4


def test_analyse_syntax_on_tiny_trees(tmp_path, tiny_encoder, tokenizer):
    rng = np.random.default_rng(0)
    words = ("the", "dog", "barks", "cat", "sees")
    trees = []
    for _ in range(12):
        tree = random_tree(rng, int(rng.integers(3, 7)))
        chosen = tuple(words[int(k)] for k in rng.integers(0, len(words), len(tree)))
        trees.append(Sentence("r", chosen, tree.heads, tree.relations, tree.upos))
    dev = [TREE, *trees[8:]]
    report = analyse_syntax(
        tiny_encoder, tokenizer, trees[:8], dev, tiny_syntax_settings(None, 200), 0
    )
    # det, nsubj and advmod have no train arcs, so no row of their own; ALL counts them
    assert report.relations["relation"].tolist() == ["dep", ALL]
    assert report.relations["count"].iloc[-1] == sum(len(t) - 1 for t in [TREE, *trees[8:]])
    assert report.relations["layer"].isin([0, 1]).all()  # 0-based until written
    assert report.relations["offset"].isin([-2, -1, 1, 2]).all()
    overall = report.relations.iloc[-1]
    assert report.metrics["all_relations_best_head"] == head_name(overall["layer"], overall["head"])
    assert report.metrics["all_relations_head_accuracy"] == overall["head_accuracy"]
    assert (report.train_sentences, report.dev_sentences) == (8, 5)
    assert report.metrics["dev_sentences"] == 5
    assert "probe_words_uas" not in report.metrics  # no word vectors given
    metrics = report.metrics
    # every word is scored (no PUNCT): UAS counts right heads out of all dev words
    words = len(TREE.words) + sum(len(t.words) for t in trees[8:])
    assert is_share_of(metrics["probe_uas"], words)
    # right-branching (head = next word, last word = root) finds TREE's "the" and "dog" only:
    # the random trees' words all have their heads to the left
    assert metrics["right_branching_uas"] == pytest.approx(2 / words)
    assert metrics["probe_uas_ci_low"] <= metrics["probe_uas"] <= metrics["probe_uas_ci_high"]
    assert metrics["probe_minus_right_branching"] == pytest.approx(
        metrics["probe_uas"] - metrics["right_branching_uas"]
    )
    assert metrics["dep_head_minus_offset"] == pytest.approx(
        metrics["dep_head_accuracy"] - metrics["dep_offset_accuracy"]
    )

    glove = tmp_path / "glove.txt"
    glove.write_text("the 1 0\ndog 0 1\n")
    settings = tiny_syntax_settings(str(glove))
    with_words = analyse_syntax(tiny_encoder, tokenizer, trees[:8], trees[8:], settings, 0)
    assert is_share_of(with_words.metrics["probe_words_uas"], sum(len(t.words) for t in trees[8:]))
    assert with_words.metrics["word_vector_coverage"] == pytest.approx(2 / 5)


def test_clark_syntax_and_coref_stages_on_the_micro_profile(micro_stage, shared_data):
    from stages import clark_coref, clark_syntax

    stage = micro_stage(settings={"paths.shared_data": str(shared_data)})
    clark_syntax.run(stage)
    syntax = json.loads(stage.out("metrics", "clark_syntax", "ud.json").read_text())
    assert syntax["train_sentences"] == 24
    assert syntax["probe_uas_ci_low"] <= syntax["probe_uas"] <= syntax["probe_uas_ci_high"]
    assert syntax["probe_uas"] == pytest.approx(
        syntax["right_branching_uas"] + syntax["probe_minus_right_branching"], abs=1e-5
    )
    assert not [key for key in syntax if key.endswith("seconds")]
    table = pd.read_csv(stage.out("plots", "clark_syntax", "relations.csv"))
    assert table["relation"].iloc[-1] == ALL
    np.testing.assert_allclose(
        table["head_accuracy"], table["offset_accuracy"] + table["head_minus_offset"], atol=1e-5
    )
    assert table["head_accuracy"].iloc[-1] == pytest.approx(
        syntax["all_relations_head_accuracy"], abs=1e-5
    )
    assert (table["head_minus_offset_ci_low"] <= table["head_minus_offset_ci_high"]).all()
    assert table["layer"].between(1, 2).all() and table["head"].between(1, 4).all()
    overall = table.iloc[-1]
    assert syntax["all_relations_best_head"] == f"L{int(overall['layer'])}-H{int(overall['head'])}"
    caption = drawn(stage.out("figures", "clark_syntax", "relations.png"))
    assert f"UD dev ({syntax['dev_sentences']} sentences)" in caption

    clark_coref.run(stage)
    coref = json.loads(stage.out("metrics", "clark_coref", "gap.json").read_text())
    assert coref["report_examples"] == 8  # clark_coref.report_examples of the micro profile
    assert is_share_of(coref["nearest_baseline_accuracy"], coref["report_examples"])
    assert coref["head_minus_nearest"] == pytest.approx(
        coref["head_accuracy"] - coref["nearest_baseline_accuracy"]
    )
    assert coref["head_minus_nearest_ci_low"] <= coref["head_minus_nearest_ci_high"]
    assert not [key for key in coref if key.endswith("seconds")]
    heads = pd.read_csv(stage.out("plots", "clark_coref", "heads.csv"))
    assert heads[["layer", "head"]].min().tolist() == [1, 1]
    assert heads[["layer", "head"]].max().tolist() == [2, 4]
    best = heads.loc[heads["select_accuracy"].idxmax()]
    assert coref["best_head"] == f"L{int(best['layer'])}-H{int(best['head'])}"
    assert coref["head_accuracy"] == pytest.approx(best["report_accuracy"], abs=1e-5)
    assert coref["best_report_head_accuracy"] == pytest.approx(heads["report_accuracy"].max())
    caption = drawn(stage.out("figures", "clark_coref", "heads.png"))
    assert f"GAP validation pronouns ({coref['report_examples']}) whose tiny_random" in caption
