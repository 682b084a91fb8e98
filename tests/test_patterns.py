"""The attention-pattern taxonomy: features, heuristic, label files, CNN, annotation page."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.attention.store import AttentionStore, TokenInfo, write_attention
from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.annotate import AnnotationSession, MapView, map_title
from pipeline.kovaleva.patterns.apply import class_shares, share_metrics
from pipeline.kovaleva.patterns.cnn import CNNTrainingSettings, resize_many
from pipeline.kovaleva.patterns.examples import pick_examples
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.figures import pattern_examples_figure
from pipeline.kovaleva.patterns.fit import fit_and_evaluate
from pipeline.kovaleva.patterns.heuristic import Thresholds, heuristic_labels
from pipeline.kovaleva.patterns.labels import (
    MapId,
    append_label,
    check_in_store,
    drop_last_label,
    labelled_map_ids,
    map_ids,
    merge_labels,
    read_annotations,
    read_labels,
    write_labels,
)
from pipeline.kovaleva.patterns.maps import label_by_heuristic, load_maps
from pipeline.kovaleva.patterns.server import make_server
from pipeline.kovaleva.patterns.settings import ClassifierSettings, PatternSettings

CHROMIUM = Path("/usr/bin/chromium")


def pair_tokens(a: int, b: int) -> tuple[list[str], np.ndarray]:
    """[CLS] a.. [SEP] b.. [SEP]: tokens and segment ids [n]."""
    tokens = ["[CLS]", *[f"a{i}" for i in range(a)], "[SEP]", *[f"b{i}" for i in range(b)], "[SEP]"]
    segments = np.array([0] * (a + 2) + [1] * (b + 1))
    return tokens, segments


def pattern_map(
    kind: str, tokens: list[str], segments: np.ndarray, noise: float, rng
) -> np.ndarray:
    """A map [n, n] of class `kind` plus `noise` of random (Dirichlet) attention per row."""
    n = len(tokens)
    special = special_mask(tokens)
    vertical = special / special.sum() * np.ones((n, 1))  # [n, n]
    previous = np.eye(n, k=-1) * ~special[None, :]  # the previous token where it is plain,
    previous += np.eye(n, k=1) * ~special[None, :] * (previous.sum(-1, keepdims=True) == 0)
    previous[previous.sum(-1) == 0, 0] = 1.0  # else the next one, else [CLS]
    block = (segments[:, None] == segments[None, :]) & ~special[None, :]
    block = block / block.sum(-1, keepdims=True)
    clean = {
        "vertical": vertical,
        "diagonal": previous,
        "vertical+diagonal": 0.5 * vertical + 0.5 * previous,
        "block": block,
        "heterogeneous": rng.dirichlet(np.full(n, 0.3), size=n),
    }[kind]
    return (1 - noise) * clean + noise * rng.dirichlet(np.ones(n), size=n)


# --- features and the heuristic ---------------------------------------------------------------


def test_features_of_hand_built_maps():
    tokens, segments = pair_tokens(2, 2)  # [CLS] a0 a1 [SEP] b0 b1 [SEP]: n = 7
    special = special_mask(tokens)
    n = len(tokens)
    to_sep = np.zeros((n, n))
    to_sep[:, 3] = 1.0  # every query on the first [SEP]
    to_previous = np.eye(n, k=-1)
    to_previous[0, 0] = 1.0  # [CLS] on itself
    uniform = np.full((n, n), 1 / n)
    features = map_features(np.stack([to_sep, to_previous, uniform]), special, segments)

    np.testing.assert_allclose(features["special"], [1.0, 3 / 7, 3 / 7])
    # previous token is plain for queries a1, [SEP], b1, [SEP]: 4 of 7 rows; the uniform map
    # has 8 plain neighbour cells of 1/7 over 7 rows
    np.testing.assert_allclose(features["diagonal"], [0.0, 4 / 7, 8 / 49], atol=1e-12)
    # plain queries of the uniform map keep 2 of their 4 plain keys in their own sentence
    assert features["block"][2] == pytest.approx(0.5)
    np.testing.assert_allclose(features["entropy"], [0.0, 0.0, 1.0], atol=1e-12)

    single = map_features(uniform[None, :4, :4] * 7 / 4, special[:4], np.zeros(4, int))
    assert np.isnan(single["block"][0])  # one sentence: no block feature


def test_heuristic_labels_each_clean_class():
    rng = np.random.default_rng(0)
    tokens, segments = pair_tokens(6, 5)
    kinds = ["vertical", "diagonal", "vertical+diagonal", "block"]
    maps = np.stack([pattern_map(k, tokens, segments, 0.05, rng) for k in kinds])
    maps = np.concatenate([maps, np.full((1, 14, 14), 1 / 14)])  # uniform: heterogeneous
    features = map_features(maps, special_mask(tokens), segments)
    labels = heuristic_labels(features, Thresholds())
    assert list(labels) == [*kinds, "heterogeneous"]


def test_heuristic_thresholds_decide_borderline_maps():
    features = pd.DataFrame(
        {
            "special": [0.49, 0.51, 0.25, 0.1, 0.3],
            "diagonal": [0.1, 0.1, 0.2, 0.1, 0.2],
            "block": [np.nan, np.nan, 0.9, 0.79, 0.5],
            "entropy": [0.5] * 5,
        }
    )
    labels = heuristic_labels(features, Thresholds(mixed=0.2, dominant=0.5, block=0.8))
    assert list(labels) == [
        "heterogeneous",  # vertical mass just under `dominant`
        "vertical",
        "block",
        "heterogeneous",  # own-sentence share just under `block`
        "vertical+diagonal",  # both >= mixed, together >= dominant
    ]


def test_block_feature_is_balanced_over_sentences():
    tokens, segments = pair_tokens(6, 1)  # a long and a one-token sentence
    n = len(tokens)
    uniform = np.full((1, n, n), 1 / n)
    within = (segments[:, None] == segments[None, :]) & ~special_mask(tokens)[None, :]
    within = (within / within.sum(-1, keepdims=True))[None]
    features = map_features(np.concatenate([uniform, within]), special_mask(tokens), segments)
    np.testing.assert_allclose(features["block"], [0.5, 1.0])


# --- the CNN ----------------------------------------------------------------------------------


def test_resize_keeps_stripes_and_scales_by_length():
    uniform = [np.full((n, n), 1 / n, dtype=np.float32) for n in (10, 32, 77)]
    out = resize_many(uniform, 16)  # [3, 1, 16, 16]
    torch.testing.assert_close(out, torch.full((3, 1, 16, 16), float(np.log1p(1.0))))

    column = np.zeros((64, 64), dtype=np.float32)
    column[:, 0] = 1.0  # everything on the first key
    resized = resize_many([column], 16)[0, 0]  # [16, 16]
    assert (resized[:, 0] > 2.5).all() and (resized[:, 1:] == 0).all()


@pytest.fixture
def one_thread():
    """Tiny convolutions run fastest on one thread (as the stages run them)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_cnn_learns_a_synthetic_separable_set(one_thread):
    rng = np.random.default_rng(1)
    maps, labels = [], []
    for i in range(200):
        kind = CLASSES[i % len(CLASSES)]
        tokens, segments = pair_tokens(int(rng.integers(4, 20)), int(rng.integers(4, 20)))
        maps.append(pattern_map(kind, tokens, segments, 0.15, rng).astype(np.float32))
        labels.append(kind)
    settings = ClassifierSettings(
        input_size=32,
        channels=(4, 4, 8, 8, 16, 16, 32, 32),
        val_fraction=0.2,
        training=CNNTrainingSettings(epochs=20, batch_size=20, learning_rate=3e-3, seed=0),
    )
    _, metrics, confusion = fit_and_evaluate(maps, labels, settings)
    assert metrics["num_val"] == 40 and len(confusion) == 40
    assert metrics["macro_f1"] >= 0.8  # chance is 0.2
    assert (confusion["actual"] == confusion["predicted"]).mean() == metrics["accuracy"]


# --- label files and the attention store ------------------------------------------------------


@pytest.fixture
def tiny_store(tmp_path) -> Path:
    """A store of 3 examples (ids 5, 8, 9) x 2 layers x 3 heads of hand-built maps per variant."""
    rng = np.random.default_rng(2)
    records = []
    for variant in ("finetuned", "pretrained"):
        for example_id, (a, b) in zip((5, 8, 9), ((3, 4), (5, 2), (4, 4)), strict=True):
            tokens, segments = pair_tokens(a, b)
            kinds = [["vertical", "diagonal", "block"], ["vertical+diagonal", "block", "diagonal"]]
            maps = np.stack(
                [[pattern_map(k, tokens, segments, 0.02, rng) for k in row] for row in kinds]
            )  # [2, 3, n, n]
            info = TokenInfo(
                tokens, segments, np.arange(len(tokens)), np.zeros((len(tokens), 2)), ()
            )
            records.append((variant, "mrpc", example_id, maps, info))
    path = tmp_path / "mrpc.parquet"
    write_attention(
        path, records, model_id="hand-built", num_layers=2, num_heads=3, config_hash="x"
    )
    return path


def write_label_rows(path: Path, rows: list[tuple]) -> Path:
    """A label file as people write it: layers and heads counted from 1."""
    columns = ["variant", "task", "example_id", "layer", "head", "label", "source"]
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


def test_heuristic_labels_maps_from_the_store(tiny_store):
    stores = {"mrpc": AttentionStore(tiny_store)}
    ids = [MapId("finetuned", "mrpc", 8, layer, head) for layer in (0, 1) for head in (0, 1, 2)]
    frame = label_by_heuristic(stores, ids, Thresholds())
    assert list(frame["label"]) == [
        "vertical", "diagonal", "block", "vertical+diagonal", "block", "diagonal"
    ]  # fmt: skip
    assert set(frame["source"]) == {"heuristic"}
    assert load_maps(stores, ids[:1])[0].shape == (10, 10)


def test_label_file_counts_from_one_on_disk_and_from_zero_in_memory(tmp_path):
    ids = [MapId("finetuned", "mrpc", 5, 0, 0), MapId("finetuned", "rte", 9, 1, 2)]
    frame = pd.DataFrame(list(ids), columns=list(MapId._fields)).assign(
        label=["vertical", "block"], source="heuristic", special=[0.75, 0.125]
    )
    path = tmp_path / "labels.csv"
    write_labels(path, frame)
    on_disk = pd.read_csv(path)
    assert list(zip(on_disk["layer"], on_disk["head"], strict=True)) == [(1, 1), (2, 3)]
    assert list(on_disk["special"]) == [0.75, 0.125]  # other columns as they were
    back = read_labels(path)
    assert map_ids(back) == ids
    pd.testing.assert_frame_equal(back.drop(columns="line"), frame)

    human = tmp_path / "human.csv"
    append_label(human, ids[1], "diagonal", "t1")
    raw = pd.read_csv(human)
    assert (raw.loc[0, "layer"], raw.loc[0, "head"]) == (2, 3)
    assert labelled_map_ids(human) == [ids[1]]
    assert drop_last_label(human) == ids[1]
    assert labelled_map_ids(human) == [] and labelled_map_ids(tmp_path / "absent.csv") == []


def test_label_file_counting_from_zero_is_rejected(tmp_path):
    path = write_label_rows(
        tmp_path / "labels.csv",
        [("finetuned", "mrpc", 5, 1, 1, "vertical", "human"),
         ("finetuned", "mrpc", 5, 1, 0, "diagonal", "human")],
    )  # fmt: skip
    with pytest.raises(PipelineError, match=r"labels\.csv:3: head 0: .* count layers and heads"):
        read_labels(path)


def test_unknown_class_names_the_row(tmp_path):
    path = write_label_rows(
        tmp_path / "labels.csv",
        [("finetuned", "mrpc", 5, 1, 1, "vertical", "human"),
         ("finetuned", "mrpc", 5, 1, 2, "diagonl", "human")],
    )  # fmt: skip
    with pytest.raises(PipelineError, match=r"labels\.csv:3: unknown class 'diagonl'"):
        read_labels(path)


def test_map_missing_from_the_store_names_the_row(tmp_path, tiny_store):
    stores = {"mrpc": AttentionStore(tiny_store)}
    rows = [
        ("finetuned", "mrpc", 5, 2, 3, "block", "heuristic"),  # the last layer's last head
        ("finetuned", "mrpc", 6, 1, 1, "block", "heuristic"),  # no example 6
        ("finetuned", "mrpc", 5, 3, 1, "block", "heuristic"),  # no layer 3 (of 2)
    ]
    path = write_label_rows(tmp_path / "labels.csv", rows[:1])
    check_in_store(read_labels(path), path, stores)
    path = write_label_rows(tmp_path / "labels.csv", rows[:2])
    with pytest.raises(PipelineError, match=r"labels\.csv:3: map \(finetuned, mrpc, example 6\)"):
        check_in_store(read_labels(path), path, stores)
    path = write_label_rows(tmp_path / "labels.csv", [rows[0], rows[2]])
    with pytest.raises(PipelineError, match=r"labels\.csv:3: layer 3, head 1 is outside"):
        check_in_store(read_labels(path), path, stores)
    path = write_label_rows(
        tmp_path / "labels.csv", [("finetuned", "rte", 5, 1, 1, "block", "human")]
    )
    with pytest.raises(PipelineError, match=r"labels\.csv:2: task 'rte' has no attention store"):
        check_in_store(read_labels(path), path, stores)


def test_human_label_wins_and_undo_removes_the_last(tmp_path):
    heuristic = write_label_rows(
        tmp_path / "heuristic.csv",
        [("finetuned", "mrpc", 5, 1, 1, "vertical", "heuristic"),
         ("finetuned", "mrpc", 5, 1, 2, "diagonal", "heuristic")],
    )  # fmt: skip
    human = tmp_path / "human.csv"
    append_label(human, MapId("finetuned", "mrpc", 5, 0, 1), "block", "t1")
    append_label(human, MapId("finetuned", "mrpc", 5, 0, 1), "heterogeneous", "t2")
    append_label(human, MapId("finetuned", "mrpc", 9, 1, 1), "diagonal", "t3")
    assert drop_last_label(human) == MapId("finetuned", "mrpc", 9, 1, 1)

    merged = merge_labels(read_labels(heuristic), read_labels(human))
    assert list(zip(merged["head"], merged["label"], merged["source"], strict=True)) == [
        (0, "vertical", "heuristic"),
        (1, "heterogeneous", "human"),  # the latest human label
    ]


def test_annotations_of_the_run_tasks_with_human_labels_winning(tmp_path, tiny_store):
    stores = {"mrpc": AttentionStore(tiny_store)}
    write_label_rows(
        tmp_path / "heuristic.csv",
        [("finetuned", "mrpc", 5, 1, 1, "vertical", "heuristic"),
         ("finetuned", "rte", 5, 1, 1, "block", "heuristic"),  # no rte store: left out
         ("finetuned", "mrpc", 8, 2, 3, "diagonal", "heuristic")],
    )  # fmt: skip
    labels = read_annotations(tmp_path, stores)  # no human.csv yet
    assert map_ids(labels) == [
        MapId("finetuned", "mrpc", 5, 0, 0), MapId("finetuned", "mrpc", 8, 1, 2)
    ]  # fmt: skip
    append_label(tmp_path / "human.csv", MapId("finetuned", "mrpc", 8, 1, 2), "block", "t1")
    labels = read_annotations(tmp_path, stores)
    assert list(labels["label"]) == ["vertical", "block"]
    assert list(labels["source"]) == ["heuristic", "human"]
    with pytest.raises(PipelineError, match="no labelled maps of the tasks"):
        read_annotations(tmp_path, {"sst2": stores["mrpc"]})  # no sst2 labels


# --- settings, shares, Fig. 1 -----------------------------------------------------------------


def test_pattern_settings_from_the_config():
    from omegaconf import OmegaConf

    from pipeline.core.params import compose_params

    cfg = OmegaConf.create(compose_params())
    settings = PatternSettings.from_config(cfg.patterns, seed=7)
    assert settings.classifier.training.seed == 7 and settings.seed == 7
    assert settings.classifier.channels == tuple(cfg.patterns.classifier.channels)
    assert settings.thresholds == Thresholds(**cfg.patterns.heuristic)
    cfg.patterns.labels = "people"
    with pytest.raises(PipelineError, match=r"unknown patterns\.labels 'people'"):
        PatternSettings.from_config(cfg.patterns, seed=7)


def predictions_frame() -> pd.DataFrame:
    """Hand-made predictions of 2 tasks x 2 variants (layers and heads from 0)."""
    return pd.DataFrame(
        [("rte", "finetuned", 0, 0, 3, "vertical", "vertical", 0.9),
         ("rte", "finetuned", 0, 1, 60, "vertical", "vertical", 0.95),  # long map
         ("rte", "finetuned", 1, 0, 10, "vertical", "block", 0.99),  # the rule disagrees
         ("rte", "finetuned", 1, 1, 10, "block", "heterogeneous", 0.6),
         ("rte", "pretrained", 0, 0, 3, "diagonal", "diagonal", 0.8),
         ("sst2", "finetuned", 0, 0, 5, "vertical", "heterogeneous", 0.7)],
        columns=["task", "variant", "layer", "head", "length", "label", "heuristic", "confidence"],
    ).assign(example_id=4)  # fmt: skip


def test_class_shares_and_their_metrics():
    predictions = predictions_frame()
    shares = class_shares(predictions)
    assert len(shares) == 2 * 2 * len(CLASSES)  # every class of every task and variant
    rte = shares[(shares["task"] == "rte") & (shares["variant"] == "finetuned")]
    assert dict(zip(rte["class"], rte["count"], strict=True)) == {
        "vertical": 3, "diagonal": 0, "vertical+diagonal": 0, "block": 1, "heterogeneous": 0
    }  # fmt: skip
    metrics = share_metrics(predictions, shares)
    assert metrics["rte_finetuned_vertical"] == 0.75
    assert metrics["rte_finetuned_heuristic_agreement"] == 0.5
    assert metrics["rte_pretrained_diagonal"] == 1.0


def test_fig1_picks_a_confident_agreed_short_map_and_names_its_head_from_one():
    picks = pick_examples(predictions_frame(), "finetuned", max_length=40)
    assert list(picks["label"]) == ["vertical", "block"]
    # vertical: the rule agrees on (0, 0) and (0, 1); (0, 1) is longer than 40 tokens
    assert (picks.loc[0, "layer"], picks.loc[0, "head"]) == (0, 0)
    # block: the only one, though the rule disagrees
    assert (picks.loc[1, "layer"], picks.loc[1, "head"]) == (1, 1)

    n = 3
    table = pd.DataFrame(
        {
            "class": "diagonal",
            "variant": "finetuned",
            "task": "rte",
            "example_id": 7,
            "layer": 2,
            "head": 4,
            "query": np.repeat(np.arange(n), n),
            "key": np.tile(np.arange(n), n),
            "query_token": np.repeat(["[CLS]", "a", "[SEP]"], n),
            "key_token": np.tile(["[CLS]", "a", "[SEP]"], n),
            "weight": np.eye(n).reshape(-1),
        }
    )
    figure = pattern_examples_figure(table)
    assert figure.axes[0].get_title() == "diagonal\nrte ex. 7, L3-H5"


# --- the annotation session ---------------------------------------------------------------


def test_session_names_heads_from_one_and_resumes(tmp_path):
    tokens, _ = pair_tokens(1, 1)
    queue = [MapId("finetuned", "rte", 7, 2, head) for head in (4, 5)]
    views = {m: MapView(tokens, np.full((5, 5), 0.2)) for m in queue}
    labels = tmp_path / "human.csv"
    session = AnnotationSession(queue, labels, views.__getitem__)
    current = session.state()["current"]
    assert current["id"] == ["finetuned", "rte", 7, 2, 4]  # the API counts from 0
    assert current["title"] == map_title(queue[0]) == "rte, finetuned, example 7, L3-H5"
    session.label(queue[0], "block")
    raw = pd.read_csv(labels)
    assert (raw.loc[0, "layer"], raw.loc[0, "head"]) == (3, 5)  # the file counts from 1

    resumed = AnnotationSession(queue, labels, views.__getitem__)
    assert resumed.done == {queue[0]} and resumed.current() == queue[1]
    resumed.undo()
    assert resumed.current() == queue[0] and labelled_map_ids(labels) == []


# --- the annotation page in a real browser ----------------------------------------------------

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def serve(queue: list[MapId], views: dict[MapId, MapView], labels: Path):
    """Start an annotation server on a free port in a thread; returns (server, url)."""
    server = make_server(AnnotationSession(queue, labels, views.__getitem__), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"


@pytest.mark.browser
def test_annotation_page_in_headless_chromium(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM}; install it with .ci/browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="python package playwright")
    rng = np.random.default_rng(3)
    tokens, segments = pair_tokens(3, 3)
    queue = [MapId("finetuned", "rte", 7, 0, head) for head in range(3)]
    views = {
        m: MapView(tokens, pattern_map(kind, tokens, segments, 0.0, rng))
        for m, kind in zip(queue, ("vertical", "diagonal", "block"), strict=True)
    }
    labels = tmp_path / "annotations" / "human.csv"
    expect = sync_api.expect

    def saved() -> list[tuple]:  # heads as the file numbers them, from 1
        frame = pd.read_csv(labels)
        return list(zip(frame["head"], frame["label"], frame["source"], strict=True))

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        server, url = serve(queue, views, labels)
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        progress, meta = page.locator("#progress"), page.locator("#meta")
        expect(progress).to_have_text("0 / 3 labelled")
        expect(meta).to_have_text("rte, finetuned, example 7, L1-H1")
        # the vertical map's [CLS] column is drawn dark blue, a plain key's cell white
        pixel = "([x, y]) => Array.from(document.getElementById('map')"
        pixel += ".getContext('2d').getImageData(x, y, 1, 1).data)"
        assert page.evaluate(pixel, [112, 112])[:3] == [0, 0, 255]
        cell = (760 - 110) // len(tokens)  # the page's canvas width, margin and cell size
        assert page.evaluate(pixel, [112 + cell, 112])[:3] == [255, 255, 255]

        page.keyboard.press("2")  # diagonal, written at once
        expect(progress).to_have_text("1 / 3 labelled")
        assert saved() == [(1, "diagonal", "human")]
        page.keyboard.press("s")  # skip head 2 ...
        expect(meta).to_have_text("rte, finetuned, example 7, L1-H3")
        page.click("button[data-label='block']")
        expect(progress).to_have_text("2 / 3 labelled")
        assert saved() == [(1, "diagonal", "human"), (3, "block", "human")]
        page.keyboard.press("u")  # undo the block label: head 3 is shown again
        expect(progress).to_have_text("1 / 3 labelled")
        expect(meta).to_have_text("rte, finetuned, example 7, L1-H3")
        assert saved() == [(1, "diagonal", "human")]
        server.shutdown()
        server.server_close()

        # a new server resumes at the first map without a human label
        server, url = serve(queue, views, labels)
        page.goto(url)
        expect(progress).to_have_text("1 / 3 labelled")
        expect(meta).to_have_text("rte, finetuned, example 7, L1-H2")
        page.keyboard.press("1")
        expect(progress).to_have_text("2 / 3 labelled")
        page.keyboard.press("4")
        expect(progress).to_have_text("3 / 3 labelled")
        expect(meta).to_have_text("All sampled maps are labelled. Thank you!")
        assert saved() == [
            (1, "diagonal", "human"), (2, "vertical", "human"), (3, "block", "human")
        ]  # fmt: skip
        browser.close()
        server.shutdown()
        server.server_close()


# --- the stages on hand-built stores ----------------------------------------------------------


def test_stages_sample_train_apply(tmp_path, one_thread):
    """patterns_sample -> patterns_train (shipped + human labels) -> patterns_apply (micro)."""
    from omegaconf import OmegaConf

    from pipeline.core.params import compose_params
    from pipeline.core.stage import StageRun
    from stages import patterns_apply, patterns_sample, patterns_train

    rng = np.random.default_rng(4)
    kinds = [["vertical", "diagonal", "block"], ["vertical+diagonal", "block", "heterogeneous"]]
    for task in ("mrpc", "rte"):
        records = []
        lengths = rng.integers(3, 12, size=(12, 2))  # sentence lengths of 12 examples
        for variant in ("finetuned", "pretrained"):
            for example_id, (a, b) in enumerate(lengths):
                tokens, segments = pair_tokens(a, b)
                maps = np.stack(
                    [[pattern_map(k, tokens, segments, 0.05, rng) for k in row] for row in kinds]
                )  # [2, 3, n, n]
                n = len(tokens)
                info = TokenInfo(tokens, segments, np.arange(n), np.zeros((n, 2)), ())
                records.append((variant, task, example_id, maps, info))
        write_attention(
            tmp_path / "outputs" / "attention" / f"{task}.parquet",
            records,
            model_id="tiny_random",
            num_layers=2,
            num_heads=3,
            config_hash="x",
        )
    overrides = [
        "experiment=micro",
        f"paths.outputs={tmp_path}/outputs",
        f"paths.data={tmp_path}/data",
    ]
    cfg = OmegaConf.create(compose_params([*overrides, "patterns.labels=annotations"]))
    stage = StageRun(cfg=cfg, out_root=tmp_path / "outputs", under_dvc=True)

    patterns_sample.run(stage)
    folder = tmp_path / "data" / "annotations" / "tiny_random"
    shipped = read_labels(folder / "heuristic.csv")
    assert len(shipped) == 80 and set(shipped["source"]) == {"heuristic"}
    # the hand-built heads are clean: the rule recovers each head's class
    expected = [
        kinds[layer][head] for layer, head in zip(shipped["layer"], shipped["head"], strict=True)
    ]
    assert (shipped["label"] == expected).mean() > 0.95
    on_disk = pd.read_csv(folder / "heuristic.csv")  # counts layers and heads from 1
    assert set(on_disk["layer"]) == {1, 2} and set(on_disk["head"]) == {1, 2, 3}
    first = map_ids(shipped.head(1))[0]
    append_label(folder / "human.csv", first, "heterogeneous", "now")

    patterns_train.run(stage)
    labels = pd.read_csv(tmp_path / "outputs" / "patterns" / "labels.csv")
    assert len(labels) == 80
    human = labels[labels["source"] == "human"]
    assert len(human) == 1 and human.iloc[0]["label"] == "heterogeneous"
    assert (human.iloc[0]["layer"], human.iloc[0]["head"]) == (first.layer + 1, first.head + 1)
    metrics = pd.read_json(tmp_path / "outputs" / "metrics" / "patterns_train.json", typ="series")
    assert metrics["num_human"] == 1 and metrics["num_val"] == 16
    assert not [key for key in metrics.index if key.endswith("_seconds")]
    confusion = pd.read_csv(tmp_path / "outputs" / "plots" / "patterns_train" / "confusion.csv")
    assert metrics["accuracy"] == (confusion["actual"] == confusion["predicted"]).mean()
    assert (tmp_path / "outputs" / "patterns" / "cnn.pt").exists()

    patterns_apply.run(stage)
    shares = pd.read_csv(tmp_path / "outputs" / "plots" / "patterns_apply" / "shares.csv")
    assert len(shares) == 2 * 2 * len(CLASSES)  # tasks x variants x classes
    np.testing.assert_allclose(shares.groupby(["task", "variant"])["share"].sum(), 1.0, atol=1e-5)
    predictions = pd.read_parquet(tmp_path / "outputs" / "patterns" / "predictions.parquet")
    assert len(predictions) == 2 * 2 * 8 * 6  # tasks x variants x num_examples x heads
    assert set(predictions["layer"]) == {1, 2} and set(predictions["head"]) == {1, 2, 3}
    examples = pd.read_csv(tmp_path / "outputs" / "plots" / "patterns_apply" / "examples.csv")
    assert set(examples["layer"]) <= {1, 2} and set(examples["head"]) <= {1, 2, 3}
    assert 0 not in set(examples["layer"]) | set(examples["head"])
    figures = tmp_path / "outputs" / "figures" / "patterns_apply"
    assert (figures / "fig1_pattern_examples.png").exists()
    assert (figures / "fig2_pattern_shares.png").exists()

    # micro and paper label a fresh sample by the rule instead of reading the label folder
    cfg = OmegaConf.create(compose_params([*overrides, "patterns.labels=heuristic"]))
    patterns_train.run(StageRun(cfg=cfg, out_root=tmp_path / "fresh", under_dvc=True))
    fresh = pd.read_csv(tmp_path / "fresh" / "patterns" / "labels.csv")
    assert len(fresh) == 80 and set(fresh["source"]) == {"heuristic"}
