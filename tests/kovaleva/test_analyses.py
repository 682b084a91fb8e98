"""Kovaleva et al. analyses on hand-built maps and stores, and Table 1.

The FrameNet reader, the paper's sentence filter and the pieces of the head scoring are
tested in tests/kovaleva/test_framenet.py; here the framenet stage runs end to end on the fixture's
sentences. Python APIs count layers and heads from 0; written outputs number them from 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.analyses.analyze.settings import AnalyzeConfig, TokenTypeRule
from pipeline.attention.store import AttentionStore, TokenInfo, store_path
from pipeline.attention.store_writer import write_attention
from pipeline.core.config import CONF_DIR
from pipeline.core.io import write_text
from pipeline.core.schema import typed
from pipeline.kovaleva.analyze import headline_metrics
from pipeline.kovaleva.formulas import (
    cls_attention,
    frame_score,
    head_cosine,
    received_attention,
    type_score,
    type_scores,
)
from pipeline.kovaleva.framenet_data import read_sentences, to_jsonl
from pipeline.kovaleva.linguistic import Word, piece_type_masks
from pipeline.kovaleva.tables import (
    cosine_summary,
    example_cosines,
    grid_example,
    grid_table,
    head_frame,
    token_type_tables,
)
from tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "framenet"


def test_head_cosine_of_equal_orthogonal_and_spread_maps():
    to_first = np.array([[1.0, 0.0], [1.0, 0.0]])  # [n, n]
    to_second = np.array([[0.0, 1.0], [0.0, 1.0]])
    uniform = np.full((2, 2), 0.5)
    first = np.stack([np.stack([to_first, to_first, to_first])])  # [L=1, H=3, 2, 2]
    second = np.stack([np.stack([to_first * 3, to_second, uniform])])
    # equal up to scale -> 1; disjoint support -> 0; <A, U> = 1, |A| = sqrt 2, |U| = 1
    np.testing.assert_allclose(head_cosine(first, second), [[1.0, 0.0, 1 / np.sqrt(2)]])
    with pytest.raises(ValueError, match="shapes differ"):
        head_cosine(first, second[..., :1, :1])


def example_maps() -> np.ndarray:
    """[L=2, H=1, 4, 4] maps over the pieces [CLS] a b [SEP]."""
    first = np.array(
        [
            [0.5, 0.5, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.0, 0.5, 0.0, 0.5],
            [1.0, 0.0, 0.0, 0.0],
        ]
    )
    return np.stack([first[None], np.eye(4)[None]])


def test_received_attention_and_type_score_take_the_max_over_the_types_tokens():
    received = received_attention(example_maps())  # [2, 1, 4]
    np.testing.assert_allclose(received[0, 0], [1.5 / 4, 1.0 / 4, 0.0, 1.5 / 4])
    np.testing.assert_allclose(received[1, 0], [0.25] * 4)
    words = np.array([False, True, True, False])
    np.testing.assert_allclose(type_score(received, words), [[0.25], [0.25]])
    assert type_score(received, np.zeros(4, bool)) is None
    scores = type_scores(received, {"words": words, "absent": np.zeros(4, bool)})
    assert list(scores) == ["words"]  # an example without the type gives no score


def test_cls_attention_reads_the_last_layers_first_row():
    maps = example_maps()
    maps[1, 0, 0] = [0.0, 0.25, 0.25, 0.5]
    np.testing.assert_allclose(cls_attention(maps), [[[0.0, 0.25, 0.25, 0.5]]])
    np.testing.assert_allclose(cls_attention(maps, layer=0), [[[0.5, 0.5, 0.0, 0.0]]])


def test_frame_score_is_the_max_from_frame_element_to_lexical_unit_pieces():
    maps = example_maps()
    # from pieces {1, 2} to piece {3}: layer 0 has 1.0 (row 1) and 0.5 (row 2); layer 1 none
    np.testing.assert_allclose(frame_score(maps, np.array([1, 2]), np.array([3])), [[1.0], [0.0]])
    np.testing.assert_allclose(frame_score(maps, np.array([2]), np.array([1, 3])), [[0.5], [0.0]])


def test_piece_type_masks_map_words_to_pieces_through_offsets_and_segments():
    # [CLS] dog ##s bark [SEP] not [SEP]; sentence A "dogs bark", sentence B "not"
    word_ids = np.array([-1, 0, 0, 1, -1, 2, -1])
    segments = np.array([0, 0, 0, 0, 0, 1, 1])
    offsets = np.array([[0, 0], [0, 3], [3, 4], [5, 9], [0, 0], [0, 3], [0, 0]])
    words = [
        [Word(0, 4, "NOUN", "nsubj", "dogs"), Word(5, 9, "VERB", "ROOT", "bark")],
        [Word(0, 3, "PART", "neg", "not")],
    ]
    rules = {
        "nouns": TokenTypeRule(pos=["NOUN"], dep=[], lower=[]),
        "subjects": TokenTypeRule(pos=[], dep=["nsubj"], lower=[]),
        "negation": TokenTypeRule(pos=[], dep=[], lower=["not"]),
        "pronouns": TokenTypeRule(pos=["PRON"], dep=[], lower=[]),
    }
    masks = {
        k: v.nonzero()[0].tolist()
        for k, v in piece_type_masks(word_ids, segments, offsets, words, rules).items()
    }
    assert masks == {
        "[CLS]": [0],
        "[SEP]": [4, 6],
        "nouns": [1, 2],
        "subjects": [1, 2],
        "negation": [5],
        "pronouns": [],
    }


TOKENS = ["[CLS]", "a", "b", "[SEP]"]


def write_store(path: Path, examples: dict[str, list[np.ndarray]]) -> AttentionStore:
    """A store with {variant: [maps [L, H, 4, 4] of examples 0, 1, ...]} for task rte."""
    info = TokenInfo(
        TOKENS, np.zeros(4, int), np.array([-1, 0, 1, -1]), np.zeros((4, 2), int), ("a b",)
    )
    records = [
        (variant, "rte", i, maps.astype(np.float32), info)
        for variant, per_example in sorted(examples.items())
        for i, maps in enumerate(per_example)
    ]
    write_attention(path, records, model_id="m", num_layers=2, num_heads=1, config_hash="t")
    return AttentionStore(path, expect_model="m")


def test_cosine_table_averages_over_examples(tmp_path):
    same, other = example_maps(), example_maps()[::-1].copy()  # layers swapped
    store = write_store(
        tmp_path / "s.parquet", {"pretrained": [same, same], "finetuned": [same, other]}
    )
    scores = example_cosines(store, "rte", [0, 1], chunk=1)  # [N=2, L=2, H=1]
    np.testing.assert_allclose(scores[1, :, 0], head_cosine(same, other)[:, 0], rtol=1e-6)
    table = cosine_summary(scores, n_resamples=50, seed=0).heads
    expected = (1.0 + head_cosine(same, other)[:, 0]) / 2  # [L]
    np.testing.assert_allclose(table["cosine"], expected, rtol=1e-6)
    assert table[["layer", "head"]].values.tolist() == [[0, 0], [1, 0]]
    assert (table["examples"] == 2).all()
    assert (table["cosine_ci_low"] <= table["cosine"]).all()
    assert (table["cosine"] <= table["cosine_ci_high"]).all()


def test_token_type_tables_leave_examples_without_the_type_out(tmp_path):
    maps = example_maps()
    store = write_store(
        tmp_path / "s.parquet", {"pretrained": [maps, maps], "finetuned": [maps, maps]}
    )
    rare = np.array([False, False, True, False])  # piece "b", only in example 1
    masks = {
        0: {"[CLS]": np.array([True, False, False, False]), "rare": np.zeros(4, bool)},
        1: {"[CLS]": np.array([True, False, False, False]), "rare": rare},
    }
    tables = token_type_tables(store, "rte", [0, 1], masks, ["[CLS]", "rare"], chunk=2)
    received, cls = tables.received, tables.cls
    part = received[received["variant"] == "pretrained"].set_index(["type", "layer"])
    assert part.loc[("[CLS]", 0), "score"] == pytest.approx(1.5 / 4)
    assert part.loc[("[CLS]", 0), "examples"] == 2
    assert part.loc[("rare", 0), "score"] == pytest.approx(0.0)  # nobody attends to "b"
    assert part.loc[("rare", 1), "score"] == pytest.approx(0.25)
    assert part.loc[("rare", 1), "examples"] == 1  # example 0 has no "rare" token
    last = cls[cls["variant"] == "finetuned"].set_index("type")
    assert last["layer"].tolist() == [1, 1]  # the last layer, counted from 0
    assert last.loc["[CLS]", "score"] == pytest.approx(1.0)  # identity map: [CLS] -> [CLS]
    assert last.loc["rare", "score"] == pytest.approx(0.0)
    layers = tables.received_layers.set_index(["variant", "type", "layer"])
    assert layers.loc[("pretrained", "rare", 1), "score"] == pytest.approx(0.25)  # H = 1
    assert layers.loc[("pretrained", "rare", 1), "examples"] == 1
    rare_only = part.loc[("rare", 1)]  # one example: a zero-width interval
    assert rare_only["score_ci_low"] == rare_only["score_ci_high"] == pytest.approx(0.25)


def test_grid_table_holds_every_weight_once():
    maps = example_maps()
    cells = grid_table(maps, TOKENS)
    assert len(cells) == 2 * 1 * 4 * 4
    row = cells[(cells["layer"] == 0) & (cells["query"] == 1) & (cells["key"] == 3)].iloc[0]
    assert (row["query_token"], row["key_token"], row["weight"]) == ("a", "[SEP]", 1.0)


def test_grid_example_is_the_first_short_example_else_the_shortest():
    infos = {7: sentence_info(["a", "b", "c"]), 3: sentence_info(["a"]), 5: sentence_info(["b"])}
    assert grid_example(infos, max_tokens=3) == 3  # 5 pieces, 3 pieces, 3 pieces: first fit
    assert grid_example(infos, max_tokens=2) == 3  # none fits: the shortest, first on ties
    assert grid_example(infos, max_tokens=5) == 7


def test_headline_metrics_name_layers_and_heads_from_one():
    per_example = np.array([[[0.9, 0.8], [0.5, 0.7]]] * 2)  # [N=2, L=2, H=2], equal examples
    cosine = cosine_summary(per_example, n_resamples=20, seed=0)
    received = pd.concat(
        [
            head_frame(np.array([[0.1, 0.2], [0.3, 0.9]]), "score").assign(type=t, variant=v)
            for v in ("pretrained", "finetuned")
            for t in ("[CLS]", "nouns")
        ]
    )
    cls = head_frame(np.array([[0.6, 0.4]]), "score", first_layer=1).assign(
        type="[SEP]", variant="finetuned"
    )
    metrics = headline_metrics(cosine, received, cls)
    assert metrics == {
        "cosine.mean": pytest.approx(0.725),
        "cosine.mean_ci_low": pytest.approx(0.725),  # equal examples: no spread
        "cosine.mean_ci_high": pytest.approx(0.725),
        "cosine.L1": pytest.approx(0.85),
        "cosine.L1_ci_low": pytest.approx(0.85),
        "cosine.L1_ci_high": pytest.approx(0.85),
        "cosine.L2": pytest.approx(0.6),
        "cosine.L2_ci_low": pytest.approx(0.6),
        "cosine.L2_ci_high": pytest.approx(0.6),
        "cosine.most_changed_layer": "L2",
        "received.pretrained.cls.top_score": pytest.approx(0.9),
        "received.pretrained.cls.top_head": "L2-H2",
        "received.finetuned.cls.top_score": pytest.approx(0.9),
        "received.finetuned.cls.top_head": "L2-H2",
        "cls_last_layer.finetuned.sep.top_score": pytest.approx(0.6),
        "cls_last_layer.finetuned.sep.top_head": "L2-H1",
    }  # only [CLS] and [SEP] have top heads; no last_two_margin with two layers


def test_analyze_settings_read_the_config_group():
    settings = typed(AnalyzeConfig, OmegaConf.load(CONF_DIR / "analyze" / "default.yaml"))
    order = ["punctuation", "nouns", "verbs", "pronouns", "subjects", "objects", "negation"]
    assert list(settings.token_types) == order  # Fig. 6's panels, in the config's order
    assert {"no", "not", "n't"} <= set(settings.token_types["negation"].lower)  # a word
    assert settings.token_types["negation"].dep == ["neg"]
    assert (settings.grid.variant, settings.grid.max_tokens) == ("finetuned", 24)


def sentence_info(words: list[str]) -> TokenInfo:
    """One-segment TokenInfo of whole-word pieces, with real character offsets."""
    text = " ".join(words)
    starts = np.cumsum([0, *[len(w) + 1 for w in words[:-1]]])
    offsets = [[0, 0], *[[s, s + len(w)] for s, w in zip(starts, words, strict=True)], [0, 0]]
    n = len(words) + 2
    word_ids = np.array([-1, *range(len(words)), -1])
    return TokenInfo(
        ["[CLS]", *words, "[SEP]"], np.zeros(n, int), word_ids, np.array(offsets), (text,)
    )


def test_analyze_stage_on_a_two_layer_four_head_store(micro_stage):
    from stages import analyze

    stage = micro_stage("rte")
    infos = [
        sentence_info(["The", "dog", "did", "not", "bark", "."]),
        sentence_info(["Dogs", "bark", "."]),
    ]
    records = []
    for variant in ("finetuned", "pretrained"):
        for example_id, info in enumerate(infos):
            n = len(info)
            to_sep = np.zeros((n, n), np.float32)
            to_sep[:, -1] = 1.0  # every query attends to [SEP]
            second = np.eye(n, dtype=np.float32) if variant == "finetuned" else to_sep
            maps = np.stack([np.stack([to_sep] * 4), np.stack([second] * 4)])  # [2, 4, n, n]
            records.append((variant, "rte", example_id, maps, info))
    write_attention(
        store_path(stage.upstream("attention"), "rte", stage.seed),
        records,
        model_id=stage.cfg.model.name,
        num_layers=2,
        num_heads=4,
        config_hash="test",
    )
    analyze.run(stage)
    seed = stage.seed_folder
    metrics = json.loads(stage.out("metrics", "analyze", "rte", f"{seed}.json").read_text())
    # layer 2: cos(all-to-[SEP], identity) = 1 / n, averaged over n = 8 and n = 5
    assert metrics["cosine.L1"] == pytest.approx(1.0)
    assert metrics["cosine.L2"] == pytest.approx((1 / 8 + 1 / 5) / 2)
    assert metrics["cosine.most_changed_layer"] == "L2"
    assert metrics["received.pretrained.sep.top_score"] == pytest.approx(1.0)
    assert metrics["received.pretrained.sep.top_head"] == "L1-H1"  # all tie: the first
    assert metrics["cls_last_layer.finetuned.cls.top_score"] == pytest.approx(1.0)
    assert metrics["cls_last_layer.finetuned.cls.top_head"] == "L2-H1"
    assert metrics["examples"] == 2
    assert not [key for key in metrics if key.endswith("_seconds")]
    plots = stage.out("plots", "analyze", "rte", seed)
    cosine = pd.read_csv(plots / "cosine.csv")
    assert cosine[["layer", "head"]].drop_duplicates().shape == (8, 2)
    assert (sorted(set(cosine["layer"])), sorted(set(cosine["head"]))) == ([1, 2], [1, 2, 3, 4])
    assert set(pd.read_csv(plots / "cls_last_layer.csv")["layer"]) == {2}  # the last, from 1
    grid = pd.read_csv(plots / "grid_example.csv")
    assert (grid["layer"].min(), grid["head"].min(), grid["query"].min()) == (1, 1, 0)
    assert len(grid) == 2 * 4 * 8 * 8  # example 0, the first of at most 24 pieces
    types = pd.read_csv(plots / "token_types.csv")
    counts = types.groupby("type")["examples"].first().to_dict()
    assert counts["negation"] == 1  # only "did not bark" has a negation; the other is left out
    assert counts["nouns"] == 2 and counts["[CLS]"] == 2
    pretrained = types[(types["variant"] == "pretrained") & (types["type"] == "nouns")]
    assert np.allclose(pretrained["score"], 0.0)  # nobody attends to the nouns
    names = {p.name for p in stage.out("figures", "analyze", "rte", seed).glob("*.png")}
    layers = pd.read_csv(plots / "cosine_layers.csv").set_index("layer")
    assert layers.loc[2, "cosine_ci_low"] == pytest.approx(1 / 8)  # the resamples' extremes
    assert layers.loc[2, "cosine_ci_high"] == pytest.approx(1 / 5)
    assert metrics["cosine.L2_ci_low"] == pytest.approx(1 / 8)
    type_layers = pd.read_csv(plots / "token_type_layers.csv")
    assert {"score_ci_low", "score_ci_high"} <= set(type_layers)
    assert set(type_layers["layer"]) == {1, 2}
    assert names == {
        "fig5_cosine.png",
        "fig5_cosine_layers.png",
        "fig6_token_type_layers.png",
        "fig6_token_types_pretrained.png",
        "fig6_token_types_finetuned.png",
        "fig7_cls_last_layer.png",
        "fig10_grid.png",
    }


def test_framenet_stage_scores_every_head_of_the_tiny_model(micro_stage):
    from stages import framenet

    stage = micro_stage()
    sentences = read_sentences(FIXTURE, stage.settings("framenet"))
    write_text(stage.data("framenet", "sentences.jsonl"), to_jsonl(sentences))
    framenet.run(stage)
    metrics = json.loads(stage.out("metrics", "framenet.json").read_text())
    heads = pd.read_csv(stage.out("plots", "framenet", "heads.csv"))
    assert metrics["sentences"] == 2 and len(heads) == 2 * 4
    assert (sorted(set(heads["layer"])), sorted(set(heads["head"]))) == ([1, 2], [1, 2, 3, 4])
    assert heads["score"].between(0.0, 1.0).all()
    assert metrics["top1.score"] == pytest.approx(heads["score"].max())
    assert metrics["top1.score"] >= metrics["top2.score"] >= metrics["top3.score"]
    assert metrics["top1.score_ci_low"] <= metrics["top1.score"] <= metrics["top1.score_ci_high"]
    ratio = heads["score"].max() / heads["score"].median()
    assert metrics["top1_over_median"] == pytest.approx(ratio, rel=1e-4)
    assert metrics["top1_over_median_ci_low"] <= metrics["top1_over_median_ci_high"]
    assert (heads["score_ci_low"] <= heads["score_ci_high"]).all()
    top = pd.read_csv(stage.out("plots", "framenet", "top_heads.csv"))
    assert top["lexical_unit"].eq("copy.v").all() and top["target"].eq("copied").all()
    first = top.iloc[0]
    assert metrics["top1.head"] == f"L{first['layer']}-H{first['head']}"
    best = heads.loc[heads["score"].idxmax()]
    assert (first["layer"], first["head"]) == (best["layer"], best["head"])
    maps = pd.read_csv(stage.out("plots", "framenet", "top_head_maps.csv"))
    assert maps[maps["rank"] == 1][["layer", "head"]].drop_duplicates().values.tolist() == [
        [first["layer"], first["head"]]
    ]
    assert {p.name for p in stage.out("figures", "framenet").glob("*.png")} == {
        "fig3_heads.png",
        "fig3_top_heads.png",
        "fig4_top_heads.png",
    }


def test_heatmaps_are_not_rendered_while_built(monkeypatch, tmp_path):
    """Building Fig. 7's annotated heatmaps renders nothing (the figure is rendered when
    saved, not once per panel)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from pipeline.plotting.figures import head_heatmaps

    renders = []
    draw = FigureCanvasAgg.draw
    monkeypatch.setattr(FigureCanvasAgg, "draw", lambda self: renders.append(1) or draw(self))
    types = ["[CLS]", "nouns", "verbs"]
    table = pd.DataFrame(
        [
            (v, t, 2, h, 0.1 * h + i)
            for v in ("a", "b")
            for i, t in enumerate(types)
            for h in (1, 2)
        ],
        columns=["variant", "type", "layer", "head", "score"],
    )
    figure = head_heatmaps(
        table, "score", facet="variant", rows="type", cols="head", ncols=2, annotate=True
    )
    assert renders == []
    figure.savefig(tmp_path / "fig.png")
    assert renders
    first = figure.axes[0]
    assert [t.get_text() for t in first.get_yticklabels()] == sorted(types)
    assert [t.get_text() for t in first.texts][:2] == ["0.10", "0.20"]  # [CLS], heads 1 and 2
