"""The attention-pattern taxonomy: features, rule, label files, map sets, agreement, CNN,
the classify command, the sampler, the annotation page and the stages."""

from __future__ import annotations

import re
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.attention.store import TokenInfo
from pipeline.attention.store_writer import write_attention
from pipeline.core.errors import PipelineError
from pipeline.core.schema import PatternClassifier, PatternRule
from pipeline.kovaleva.patterns import CLASSES, DEFINITIONS
from pipeline.kovaleva.patterns.agreement import (
    annotator_agreement,
    kappa,
    paired_labels,
    raw_agreement,
)
from pipeline.kovaleva.patterns.annotate import AnnotationSession
from pipeline.kovaleva.patterns.apply import (
    class_shares,
    classify_map_set,
    seed_change,
    strongest_is_special,
    vertical_statistics,
)
from pipeline.kovaleva.patterns.cnn import (
    ORIGINAL_INPUT,
    PatternCNN,
    inputs_of,
    load_classifier,
    network_inputs,
    pairs_of,
    predict,
    save_classifier,
    train,
)
from pipeline.kovaleva.patterns.examples import pick_examples
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.heuristic import heuristic_labels
from pipeline.kovaleva.patterns.labels import (
    LABEL_COLUMNS,
    append_label,
    drop_last_label,
    read_label_file,
    read_labels,
    read_sample,
    resolve,
)
from pipeline.kovaleva.patterns.mapsets import LabelledMap, read_map_set, write_map_set
from pipeline.kovaleva.patterns.roles import role_channels, sentence_ids
from pipeline.kovaleva.patterns.sample import (
    draw,
    even_split,
    nearest,
    next_ids,
    parse_boundary,
    unsampled,
)
from pipeline.kovaleva.patterns.server import make_server
from pipeline.kovaleva.patterns.stacked import StackedCNN
from pipeline.kovaleva.patterns.train import (
    Job,
    fit,
    fit_all,
    fit_stack,
    load_labelled_set,
    recall_by_round,
    schedule,
    stacks,
)

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
    labels = heuristic_labels(features, PatternRule(mixed=0.25, dominant=0.5, block=0.8))
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
    labels = heuristic_labels(features, PatternRule(mixed=0.2, dominant=0.5, block=0.8))
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


# --- token roles and the network's input ------------------------------------------------------


def test_sentence_ids_and_role_channels_of_a_pair():
    tokens, segments = pair_tokens(2, 3)  # [CLS] a0 a1 [SEP] b0 b1 b2 [SEP]
    assert sentence_ids(tokens).tolist() == segments.tolist()
    cls, sep, same = role_channels(tokens)  # each [8, 8]
    assert cls[:, 0].all() and cls[:, 1:].sum() == 0
    assert sep[:, [3, 7]].all() and sep.sum() == 2 * 8
    assert same[1, 2] == 1 and same[4, 6] == 1  # within a sentence
    assert same[1, 4] == 0 and same[0, 0] == 0 and same[3, 3] == 0  # across, or special


def test_network_input_keeps_stripes_and_scales_by_length():
    tokens, _ = pair_tokens(14, 15)  # n = 32
    uniform = np.full((1, 32, 32), 1 / 32, dtype=np.float32)
    out = network_inputs(uniform, tokens, 16)  # [1, 5, 16, 16]
    assert out.shape == (1, 5, 16, 16)
    torch.testing.assert_close(out[0, 0], torch.full((16, 16), float(np.log(2.0))))
    torch.testing.assert_close(out[0, 1], torch.ones(16, 16))  # contrast: map / its max
    column = np.zeros((1, 32, 32), dtype=np.float32)
    column[0, :, 0] = 1.0  # every query on [CLS]
    out = network_inputs(column, tokens, 16)
    assert out[0, 0, :, 0].min() > out[0, 0, :, 1:].max()  # the stripe stays one stripe
    assert out[0, 2, :, 0].min() > 0 and out[0, 2, :, 1:].max() == 0  # the [CLS] channel


@pytest.fixture
def one_thread():
    """Tiny convolutions run fastest on one thread (as the stages run them)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def synthetic_set(count: int, seed: int) -> tuple[list[LabelledMap], np.ndarray]:
    rng = np.random.default_rng(seed)
    maps, labels = [], []
    for i in range(count):
        kind = CLASSES[i % len(CLASSES)]
        tokens, segments = pair_tokens(int(rng.integers(4, 20)), int(rng.integers(4, 20)))
        weights = pattern_map(kind, tokens, segments, 0.15, rng).astype(np.float32)
        maps.append(LabelledMap(weights, tuple(tokens)))
        labels.append(kind)
    return maps, np.asarray(labels)


SMALL_CNN = PatternClassifier(
    input_size=32,
    channels=[4, 4, 8, 8, 16, 16, 32, 32],
    dropout=0.3,
    folds=3,
    ensemble=1,
    cv_ensemble=1,
    workers=1,
    stack=2,
    bootstrap_resamples=50,
    epochs=20,
    batch_size=20,
    learning_rate=3e-3,
    average_last=5,
    threads=1,
)


def test_cnn_learns_a_synthetic_separable_set(one_thread):
    maps, labels = synthetic_set(200, seed=1)
    model = fit(inputs_of(maps[:160], 32), labels[:160], SMALL_CNN, seed=0)
    predicted = np.asarray(CLASSES)[
        predict([model], inputs_of(maps[160:], 32), pairs_of(maps[160:])).argmax(-1)
    ]
    assert raw_agreement(labels[160:], predicted) >= 0.8  # chance is 0.2


def test_networks_do_not_depend_on_workers_or_the_networks_stacked_beside_them(one_thread):
    maps, labels = synthetic_set(60, seed=2)
    inputs = inputs_of(maps, 16)
    settings = replace(SMALL_CNN, epochs=2, average_last=1)
    jobs = [Job(np.arange(40), seed=0), Job(np.arange(20, 60), seed=1)]
    jobs += [Job(np.arange(60), seed=2), Job(np.arange(60), seed=3), Job(np.arange(60), seed=4)]
    assert [len(s) for s in stacks(jobs, 2)] == [1, 1, 2, 1]
    alone = fit_all(inputs, labels, replace(settings, stack=1), jobs, workers=1)
    stacked = fit_all(inputs, labels, replace(settings, stack=2), jobs, workers=2)
    for mine, theirs in zip(alone, stacked, strict=True):
        for name, tensor in mine.state_dict().items():
            assert torch.equal(tensor, theirs.state_dict()[name]), name
    assert not torch.equal(alone[2].classify.weight, alone[3].classify.weight)


def test_the_largest_stacks_go_first_and_the_last_ones_split_for_the_workers():
    settings = replace(SMALL_CNN, stack=2, batch_size=20)
    small, large = np.arange(40), np.arange(60)  # 2 and 3 batches an epoch
    jobs = [Job(small, 0), Job(small, 1), Job(large, 2), Job(large, 3), Job(large, 4)]
    assert stacks(jobs, 2) == [[0, 1], [2, 3], [4]]
    assert schedule(jobs, settings, workers=1) == [[2, 3], [0, 1], [4]]  # 6, 4, 3 batches
    assert schedule(jobs, settings, workers=2) == [[2, 3], [0, 1], [4]]
    assert schedule(jobs, settings, workers=3) == [[2, 3], [0], [1], [4]]
    assert schedule(jobs, settings, workers=9) == [[2], [3], [0], [1], [4]]


def weight_gap(a: PatternCNN, b: PatternCNN) -> float:
    """The largest difference of a weight (not a bias or a statistic) between two networks."""
    return max(
        (t - b.state_dict()[name]).abs().max().item()
        for name, t in a.state_dict().items()
        if name.endswith("weight")
    )


def test_a_stack_trains_each_network_as_it_would_train_alone(one_thread):
    """Same initial weights, data order, dropout masks and averaging: the batched model and
    the torch module differ by rounding alone."""
    maps, labels = synthetic_set(60, seed=6)
    inputs = inputs_of(maps, 16)
    settings = replace(SMALL_CNN, epochs=2, average_last=2, batch_size=20)
    jobs = [Job(np.arange(60), seed=7), Job(np.arange(60), seed=8)]
    stacked = fit_stack(inputs, labels, settings, jobs)
    for job, network in zip(jobs, stacked, strict=True):
        alone = fit(inputs, labels, settings, job.seed)
        assert weight_gap(alone, network) < 1e-4
    assert weight_gap(stacked[0], stacked[1]) > 1e-2


def test_the_stacked_model_computes_each_networks_logits(one_thread):
    torch.manual_seed(0)
    networks = [PatternCNN((4, 4, 8, 8), dropout=0.0) for _ in range(3)]
    for net in networks:  # running statistics of their own
        net.train()(torch.randn(12, 5, 16, 16))
    x = torch.randn(7, 5, 16, 16)
    model = StackedCNN(networks)
    for training in (True, False):
        model.train(training)
        logits = model(x.transpose(0, 1)[None].expand(3, -1, -1, -1, -1))  # [3, 7, C]
        for net, mine in zip(networks, logits, strict=True):
            torch.testing.assert_close(mine, net.train(training)(x), rtol=1e-5, atol=1e-5)


def test_saving_one_classifier_twice_gives_the_same_bytes(tmp_path):
    torch.manual_seed(0)
    networks = [PatternCNN((4, 4, 4, 4)) for _ in range(2)]
    written = []
    for name in ("a.pt", "b.pt", "a.pt"):
        save_classifier(
            tmp_path / name, [networks[:1], networks[1:]], (4, 4, 4, 4), 16, ORIGINAL_INPUT, "x"
        )
        written.append((tmp_path / name).read_bytes())
    assert written[0] == written[1] == written[2]
    loaded = load_classifier(tmp_path / "a.pt").ensembles[1][0]
    assert torch.equal(loaded.classify.weight, networks[1].classify.weight)


def test_weight_averaging_ends_between_the_snapshots_it_averages(one_thread):
    maps, labels = synthetic_set(40, seed=3)
    inputs = inputs_of(maps, 16)
    targets = torch.tensor([CLASSES.index(c) for c in labels])
    snapshots = []
    for average_last in (0, 2):
        torch.manual_seed(0)
        model = PatternCNN((4, 4, 4, 4, 4, 4, 4, 4), dropout=0.0)
        settings = replace(
            SMALL_CNN, epochs=3, batch_size=20, learning_rate=3e-3, average_last=average_last
        )
        train(model, inputs, targets, settings, seed=0)
        snapshots.append(model.classify.weight.detach().clone())
    # the averaged weights are not the last epoch's (those are the unaveraged model's)
    assert not torch.allclose(snapshots[0], snapshots[1])


def test_prediction_averages_an_ensemble_and_never_calls_one_sentence_block(one_thread):
    torch.manual_seed(0)
    models = [PatternCNN((4, 4, 4, 4, 4, 4, 4, 4)) for _ in range(2)]
    inputs = torch.randn(6, 5, 16, 16)
    pairs = torch.tensor([True, False] * 3)
    probs = predict(models, inputs, pairs)  # [6, 5]
    torch.testing.assert_close(probs.sum(-1), torch.ones(6))
    assert (probs[~pairs, CLASSES.index("block")] == 0).all()
    both = torch.stack([m.eval()(inputs).softmax(-1) for m in models]).mean(0)
    torch.testing.assert_close(probs[pairs], both[pairs])


# --- map sets and the classify command ---------------------------------------------------------


def test_map_set_round_trip_and_one_line_errors(tmp_path):
    tokens = ("[CLS]", "a", "[SEP]")
    weights = np.full((3, 3), 1 / 3, dtype=np.float32)
    path = tmp_path / "maps.npz"
    write_map_set(path, {"x1": LabelledMap(weights, tokens)})
    back = read_map_set(path)
    assert back["x1"].tokens == tokens
    np.testing.assert_allclose(back["x1"].weights, weights, atol=1e-3)

    def broken(**arrays) -> Path:
        bad = tmp_path / f"bad{len(list(tmp_path.glob('bad*')))}.npz"
        np.savez(bad, **arrays)
        return bad

    cases = {
        "square": broken(map_a=np.zeros((3, 2)), tokens_a=np.array(["[CLS]", "x", "[SEP]"])),
        "one word piece per row": broken(map_a=weights, tokens_a=np.array(["[CLS]", "[SEP]"])),
        "has no tokens_a": broken(map_a=weights),
        "tokens_b has no map": broken(
            map_a=weights, tokens_a=np.array(tokens), tokens_b=np.array(tokens)
        ),
        "neither map_<id> nor tokens_<id>": broken(other=weights),
    }
    for message, bad in cases.items():
        with pytest.raises(PipelineError, match=message) as error:
            read_map_set(bad)
        assert "\n" not in str(error.value)


def test_classify_command_on_a_tiny_npz(tmp_path, one_thread, capsys):
    from tools import patterns_classify

    maps, labels = synthetic_set(60, seed=5)
    model = fit(inputs_of(maps, 16), labels, SMALL_CNN, seed=0)
    classifier = tmp_path / "cnn.pt"
    save_classifier(
        classifier, [[model], [model]], SMALL_CNN.channels, 16, ORIGINAL_INPUT, "hand-built"
    )
    npz = tmp_path / "maps.npz"
    write_map_set(npz, {f"m{i}": maps[i] for i in range(5)})
    out = tmp_path / "labels.csv"
    code = patterns_classify.main([str(npz), "--out", str(out), "--classifier", str(classifier)])
    assert code == 0
    written = pd.read_csv(out)
    assert list(written.columns) == ["id", "label"]
    assert written["id"].tolist() == [f"m{i}" for i in range(5)]
    expected = np.asarray(CLASSES)[
        predict([model], inputs_of(maps[:5], 16), pairs_of(maps[:5])).argmax(-1)
    ]
    assert written["label"].tolist() == expected.tolist()

    capsys.readouterr()  # forget the training's progress bars
    bad = tmp_path / "bad.npz"
    np.savez(bad, map_q=np.zeros((4, 4)), tokens_q=np.array(["[CLS]", "[SEP]"]))
    with pytest.raises(SystemExit) as exit_:
        patterns_classify.main(
            [str(bad), "--out", str(tmp_path / "no.csv"), "--classifier", str(classifier)]
        )
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "tokens_q" in err and "\n" not in err
    assert not (tmp_path / "no.csv").exists()


# --- label files, resolution and agreement -----------------------------------------------------


def write_labels_csv(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=list(LABEL_COLUMNS)).to_csv(path, index=False)
    return path


def test_label_file_errors_name_the_line(tmp_path):
    ok = ("v1", "vertical", "visual", "ann", "2026-11-23")
    cases = {
        "unknown class 'stripes'": ("v1", "stripes", "visual", "ann", "d"),
        "rule labels do not belong": ("v1", "vertical", "rule", "ann", "d"),
        "no annotator": ("v1", "vertical", "visual", " ", "d"),
        "map 'v9' is not in": ("v9", "vertical", "visual", "ann", "d"),
    }
    for message, row in cases.items():
        path = write_labels_csv(tmp_path / "labels.csv", [ok, row])
        with pytest.raises(PipelineError, match=message) as error:
            read_label_file(path, ["v1", "v2"])
        assert f"{path}:3" in str(error.value)
    pd.DataFrame({"map_id": ["v1"]}).to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(PipelineError, match="lacks columns"):
        read_label_file(tmp_path / "short.csv", ["v1"])


def labels_frame(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    """(map_id, annotator, label) -> a label frame."""
    return pd.DataFrame(
        [(m, label, "visual", who, "d") for m, who, label in rows], columns=list(LABEL_COLUMNS)
    )


def test_resolution_majority_then_primary_annotator():
    labels = labels_frame(
        [
            ("v1", "a", "vertical"), ("v2", "a", "diagonal"), ("v3", "a", "block"),
            ("v1", "b", "heterogeneous"),  # a tie: the primary annotator (a) wins
            ("v2", "b", "vertical+diagonal"), ("v2", "c", "vertical+diagonal"),  # 2 against 1
            ("v4", "b", "block"), ("v4", "c", "diagonal"),  # a tie without a: the first label
        ]
    )  # fmt: skip
    resolved = resolve(labels).set_index("map_id")
    assert resolved["label"].to_dict() == {
        "v1": "vertical", "v2": "vertical+diagonal", "v3": "block", "v4": "block"
    }  # fmt: skip
    assert resolved["num_labels"].to_dict() == {"v1": 2, "v2": 3, "v3": 1, "v4": 2}
    assert resolved["agreed"].to_dict() == {"v1": False, "v2": False, "v3": True, "v4": False}


def test_agreement_and_kappa_on_hand_made_labels():
    first = ["vertical", "vertical", "diagonal", "diagonal"]
    second = ["vertical", "diagonal", "diagonal", "diagonal"]
    # p_o = 3/4; p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert raw_agreement(first, second) == 0.75
    assert kappa(first, second) == pytest.approx(0.5)
    labels = labels_frame(
        [("v1", "a", "vertical"), ("v2", "a", "vertical"), ("v3", "a", "diagonal"),
         ("v4", "a", "diagonal"), ("v1", "b", "vertical"), ("v2", "b", "diagonal"),
         ("v3", "c", "diagonal"), ("v4", "c", "diagonal")]
    )  # fmt: skip
    table = annotator_agreement(labels).set_index("other")
    assert table.loc["b", "pairs"] == 2 and table.loc["b", "agreement"] == 0.5
    assert table.loc["c", "agreement"] == 1.0
    assert table.loc["any", "pairs"] == 4 and table.loc["any", "agreement"] == 0.75
    assert table.loc["any", "kappa"] == pytest.approx(0.5)


def test_append_and_drop_human_labels(tmp_path):
    path = tmp_path / "human.csv"
    append_label(path, "v1", "block", "ann", "t1")
    append_label(path, "v2", "diagonal", "ann", "t2")
    frame = read_label_file(path, ["v1", "v2"])
    assert frame[["map_id", "label", "source"]].values.tolist() == [
        ["v1", "block", "human"], ["v2", "diagonal", "human"]
    ]  # fmt: skip
    assert drop_last_label(path) == "v2"
    assert read_label_file(path, ["v1", "v2"])["map_id"].tolist() == ["v1"]
    with pytest.raises(PipelineError, match="unknown class"):
        append_label(path, "v1", "square", "ann", "t3")


# --- the sampler --------------------------------------------------------------------------------


def test_even_split_and_next_ids():
    assert even_split(10, [5, 5, 5]) == [4, 3, 3]
    assert even_split(10, [1, 20, 20]) == [1, 5, 4]
    assert even_split(50, [3, 4]) == [3, 4]  # capped by what the cells hold
    assert next_ids(["v0007", "v0420"], 2) == ["v0421", "v0422"]


def test_sampler_spreads_each_rule_class_over_cells_and_is_seeded():
    rows = [
        (variant, task, example, 0, head, 10, rule)
        for variant in ("pretrained", "finetuned")
        for task in ("mrpc", "rte")
        for example in range(20)
        for head, rule in enumerate(["vertical", "vertical", "heterogeneous", "block"])
    ]
    catalogue = pd.DataFrame(
        rows, columns=["variant", "task", "example_id", "layer", "head", "length", "rule"]
    )
    chosen = draw(catalogue, ["block", "vertical"], 12, seed=3)
    assert chosen["rule"].value_counts().to_dict() == {"block": 12, "vertical": 12}
    per_cell = chosen[chosen["rule"] == "block"].groupby(["variant", "task"]).size()
    assert per_cell.tolist() == [3, 3, 3, 3]
    assert not chosen.duplicated(["variant", "task", "example_id", "layer", "head"]).any()
    pd.testing.assert_frame_equal(chosen, draw(catalogue, ["block", "vertical"], 12, seed=3))
    assert not chosen.equals(draw(catalogue, ["block", "vertical"], 12, seed=4))


def test_sampler_draws_by_another_stratum_and_skips_sampled_maps():
    rows = [
        (variant, "mrpc", example, 0, head, 10, "vertical", stratum)
        for variant in ("pretrained", "finetuned")
        for example in range(10)
        for head, stratum in enumerate(["seeds_disagree", "", "block_candidate"])
    ]
    catalogue = pd.DataFrame(
        rows,
        columns=["variant", "task", "example_id", "layer", "head", "length", "rule", "stratum"],
    )
    # heads 1 and 3 (from 1) of example 0, pretrained, were labelled before
    sampled = pd.DataFrame(
        {"map_id": ["v0001", "v0002"], "variant": "pretrained", "task": "mrpc"}
        | {"example_id": 0, "layer": 1, "head": [1, 3]}
    )
    fresh = unsampled(catalogue, sampled)
    assert len(fresh) == len(catalogue) - 2
    chosen = draw(fresh, ["seeds_disagree"], 19, seed=0, by="stratum")
    assert (chosen["stratum"] == "seeds_disagree").all() and len(chosen) == 19
    assert chosen.groupby("variant").size().to_dict() == {"finetuned": 10, "pretrained": 9}


def test_boundary_draw_takes_the_least_sure_maps_of_each_boundary():
    # two cells; in each, maps whose two most probable types are (vertical, vertical+diagonal)
    # in either order, with gaps 0.0, 0.1, ..., and maps of another boundary with gap 0
    rows = []
    for variant in ("pretrained", "finetuned"):
        for example in range(6):
            first, second = ("vertical", "vertical+diagonal")[:: 1 if example % 2 else -1]
            rows.append((variant, "rte", example, 0, 0, 9, "vertical", first, second, example / 10))
            rows.append((variant, "rte", example, 0, 1, 9, "diagonal", "diagonal", "block", 0.0))
    columns = ["variant", "task", "example_id", "layer", "head", "length", "rule"]
    catalogue = pd.DataFrame(rows, columns=[*columns, "first", "second", "gap"])
    chosen = nearest(catalogue, ["vertical|vertical+diagonal"], 5, seed=0)
    assert (chosen["stratum"] == "boundary:vertical|vertical+diagonal").all()
    assert (chosen["head"] == 0).all()  # never a map of another boundary, however close
    by_cell = chosen.groupby("variant")["gap"].apply(sorted).to_dict()
    assert sorted(map(len, by_cell.values())) == [2, 3]  # spread over the two cells
    for gaps in by_cell.values():  # the smallest gaps of each cell
        assert gaps == pytest.approx([i / 10 for i in range(len(gaps))])
    for bad in ("vertical", "vertical|vertical", "vertical|stripes"):
        with pytest.raises(PipelineError, match=f"boundary '{re.escape(bad)}'"):
            parse_boundary(bad)


def write_label_folder(folder: Path, kinds: list[str], rounds: bool) -> None:
    """A label folder of len(kinds) synthetic maps, each labelled as its kind; `rounds`:
    sample.csv with its round and stratum columns (else without, as older folders)."""
    maps, _ = synthetic_set(len(kinds), seed=len(kinds))
    folder.mkdir(parents=True)
    ids = [f"v{i:04d}" for i in range(1, len(kinds) + 1)]
    write_map_set(folder / "maps.npz", dict(zip(ids, maps, strict=True)))
    sample = pd.DataFrame(
        {"map_id": ids, "variant": "finetuned", "task": "rte", "example_id": range(len(ids))}
        | {"layer": 1, "head": 1, "length": [len(m.tokens) for m in maps], "rule": kinds}
    )
    if rounds:
        sample = sample.assign(round=[1] * (len(ids) - 2) + [2, 2], stratum="rule:x")
    sample.to_csv(folder / "sample.csv", index=False)
    rows = [(m, k, "visual", "a", "2026-11-25") for m, k in zip(ids, kinds, strict=True)]
    write_labels_csv(folder / "visual.csv", rows)


def test_label_folders_pool_with_their_names_rounds_and_example_groups(tmp_path):
    write_label_folder(tmp_path / "alpha", ["vertical", "diagonal", "block", "diagonal"], True)
    write_label_folder(tmp_path / "beta", ["vertical", "heterogeneous", "block"], False)
    old = read_sample(tmp_path / "beta" / "sample.csv")  # a file without the new columns
    assert (old["round"] == 1).all() and list(old["stratum"]) == ["rule:vertical", *[
        "rule:heterogeneous", "rule:block"]]  # fmt: skip
    pooled = load_labelled_set([tmp_path / "alpha", tmp_path / "beta"])
    assert list(pooled.origin["map_id"]) == [
        *[f"alpha/v000{i}" for i in range(1, 5)],
        *[f"beta/v000{i}" for i in range(1, 4)],
    ]
    assert list(pooled.origin["round"]) == [1, 1, 2, 2, 1, 1, 1]
    alpha, beta = ["vertical", "diagonal", "block", "diagonal"], ["vertical", "heterogeneous"]
    assert list(pooled.labels) == [*alpha, *beta, "block"]
    assert pooled.folders == ("alpha", "beta") and len(pooled.maps) == 7
    # example 0 of rte in two folders is two inputs (two models' maps), not one group
    assert len(set(pooled.groups)) == 7
    assert set(pooled.all_labels["map_id"]) == set(pooled.origin["map_id"])
    with pytest.raises(PipelineError, match="name each folder once"):
        load_labelled_set([tmp_path / "alpha", tmp_path / "alpha"])


def test_recall_by_round_counts_each_class_of_each_folder_and_round():
    out_of_fold = pd.DataFrame(
        {
            "labels_from": ["a", "a", "a", "a", "b"],
            "round": [1, 1, 2, 2, 1],
            "visual": ["vertical", "vertical", "vertical", "block", "diagonal"],
            "cnn": ["vertical", "diagonal", "vertical", "heterogeneous", "diagonal"],
        }
    )
    table = recall_by_round(out_of_fold).set_index(["labels_from", "round", "class"])
    assert table.loc[("a", 1, "vertical"), ["labelled", "recalled"]].tolist() == [2, 1]
    assert table.loc[("a", 2, "block"), "recall"] == 0.0
    assert table.loc[("a", 2, "all"), "recall"] == 0.5  # the accuracy of the round
    assert table.loc[("b", 1, "diagonal"), "recall"] == 1.0
    assert ("a", 1, "block") not in table.index  # no label of that class in that round


# --- shares, seed stability, Fig. 1 -----------------------------------------------------------


def test_class_shares_with_intervals_over_examples():
    rng = np.random.default_rng(0)
    rows = []
    for example in range(40):
        for head in range(10):
            label = "vertical" if rng.random() < 0.6 else "heterogeneous"
            second = label if head else "diagonal"  # the second network differs on head 0
            rows.append(("rte", "finetuned", example, 0, head, label, second))
    predictions = pd.DataFrame(
        rows, columns=["task", "variant", "example_id", "layer", "head", "label", "label_seed2"]
    )
    shares = class_shares(predictions, n_resamples=200, seed=0).set_index("class")
    assert shares["share"].sum() == pytest.approx(1.0)
    vertical = shares.loc["vertical"]
    assert vertical["share"] == pytest.approx((predictions["label"] == "vertical").mean())
    assert vertical["ci_low"] < vertical["share"] < vertical["ci_high"]
    assert shares.loc["block", "ci_high"] == 0.0
    assert seed_change(predictions) == pytest.approx(0.1)  # one head in ten moved


def test_strongest_column_of_hand_built_maps():
    tokens = ["[CLS]", "a", "b", "[SEP]", "c", "[SEP]"]
    n = len(tokens)
    onto = np.zeros((4, n, n))
    onto[0, :, 0] = 1.0  # every query on [CLS]
    onto[1, :, 3] = 1.0  # on the first [SEP]
    onto[2, :, 2] = 1.0  # on the plain token b
    onto[3] = np.eye(n)  # diagonal: all columns tie at 1/n; the first, [CLS], wins
    onto[3, :, 4] += 0.01  # ... unless a plain column is slightly stronger
    assert strongest_is_special(onto, tokens).tolist() == [True, True, False, False]


def test_vertical_margin_and_share_on_special_columns():
    rows = []
    for example in range(30):
        for head in range(10):
            # heads 0-5 vertical, 6-8 heterogeneous, 9 diagonal: margin 0.6 - 0.3 = 0.3
            label = "vertical" if head < 6 else "heterogeneous" if head < 9 else "diagonal"
            special = head < 4 if example % 2 else head < 2  # 4/6 or 2/6 of vertical maps
            rows.append(("mrpc", "pretrained", example, 0, head, label, special))
    # a second cell where diagonal leads: a negative margin, and no vertical map at all
    for example in range(30):
        for head in range(4):
            label = "diagonal" if head < 3 else "heterogeneous"
            rows.append(("mrpc", "finetuned", example, 0, head, label, True))
    columns = ["task", "variant", "example_id", "layer", "head", "label", "strongest_special"]
    predictions = pd.DataFrame(rows, columns=columns)
    table = vertical_statistics(predictions, n_resamples=200, seed=0)
    stats = table.set_index(["variant", "statistic"])
    margin = stats.loc[("pretrained", "vertical_margin")]
    assert margin["estimate"] == pytest.approx(0.3)
    assert margin["ci_low"] == pytest.approx(0.3) and margin["ci_high"] == pytest.approx(0.3)
    on_special = stats.loc[("pretrained", "vertical_on_special")]
    assert on_special["estimate"] == pytest.approx(0.5)  # (4 + 2) / (6 + 6) on average
    assert on_special["maps"] == 30 * 6
    assert on_special["ci_low"] < 0.5 < on_special["ci_high"]  # examples differ: 1/3 or 2/3
    assert stats.loc[("finetuned", "vertical_margin"), "estimate"] == pytest.approx(-0.75)
    assert np.isnan(stats.loc[("finetuned", "vertical_on_special"), "estimate"])


def test_fig1_picks_an_agreed_confident_short_map():
    tokens = tuple(["[CLS]", *["w"] * 3, "[SEP]"])
    long_tokens = tuple(["[CLS]", *["w"] * 50, "[SEP]"])
    maps = {
        "a": LabelledMap(np.eye(5, dtype=np.float32), tokens),
        "b": LabelledMap(np.eye(5, dtype=np.float32), tokens),
        "c": LabelledMap(np.eye(52, dtype=np.float32), long_tokens),
        "d": LabelledMap(np.eye(5, dtype=np.float32), tokens),
    }
    out_of_fold = pd.DataFrame(
        {
            "map_id": ["a", "b", "c", "d"],
            "agreed": [True, True, True, False],
            "visual": ["diagonal"] * 4,
            "cnn": ["diagonal", "diagonal", "diagonal", "diagonal"],
            "confidence": [0.7, 0.8, 0.99, 0.95],
        }
    )
    picks = pick_examples(out_of_fold, maps)
    assert picks["map_id"].tolist() == ["b"]  # agreed, short, then the most confident


# --- the annotation session and page ------------------------------------------------------------


def page_maps(rng) -> dict[str, LabelledMap]:
    tokens, segments = pair_tokens(3, 3)
    return {
        m: LabelledMap(
            pattern_map(kind, tokens, segments, 0.0, rng).astype(np.float32), tuple(tokens)
        )
        for m, kind in zip(("v1", "v2", "v3"), ("vertical", "diagonal", "block"), strict=True)
    }


def test_session_resumes_per_annotator_and_shows_the_guide(tmp_path):
    maps = page_maps(np.random.default_rng(3))
    labels = tmp_path / "human.csv"
    session = AnnotationSession(maps, labels, "ann")
    state = session.state()
    assert state["current"]["id"] == "v1" and state["definitions"] == DEFINITIONS
    session.label("v1", "vertical")
    assert AnnotationSession(maps, labels, "ann").current() == "v2"
    other = AnnotationSession(maps, labels, "someone-else")  # labels of its own
    assert other.current() == "v1"
    other.undo()  # cannot undo another annotator's label
    assert read_label_file(labels, maps)["annotator"].tolist() == ["ann"]


# --- the annotation page in a real browser ----------------------------------------------------

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def serve(maps: dict[str, LabelledMap], labels: Path):
    """Start an annotation server on a free port in a thread; returns (server, url)."""
    server = make_server(AnnotationSession(maps, labels, "ann"), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"


@pytest.mark.browser
def test_annotation_page_in_headless_chromium(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM}; install it with .ci/browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="python package playwright")
    maps = page_maps(np.random.default_rng(3))
    labels = tmp_path / "annotations" / "human.csv"
    expect = sync_api.expect

    def saved() -> list[tuple]:
        frame = pd.read_csv(labels)
        return list(zip(frame["map_id"], frame["label"], frame["source"], strict=True))

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        server, url = serve(maps, labels)
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        progress, meta = page.locator("#progress"), page.locator("#meta")
        expect(progress).to_have_text("0 / 3 labelled")
        expect(meta).to_have_text("v1 (9 word pieces), annotator ann")
        expect(page.locator("#definitions")).to_contain_text(DEFINITIONS["block"])
        # the vertical map's [CLS] column is drawn dark blue, a plain key's cell white
        pixel = "([x, y]) => Array.from(document.getElementById('map')"
        pixel += ".getContext('2d').getImageData(x, y, 1, 1).data)"
        assert page.evaluate(pixel, [112, 112])[:3] == [0, 0, 255]
        cell = (760 - 110) // 9  # the page's canvas width, margin and cell size
        assert page.evaluate(pixel, [112 + cell, 112])[:3] == [255, 255, 255]

        page.keyboard.press("2")  # diagonal, written at once
        expect(progress).to_have_text("1 / 3 labelled")
        assert saved() == [("v1", "diagonal", "human")]
        page.keyboard.press("s")  # skip v2 ...
        expect(meta).to_have_text("v3 (9 word pieces), annotator ann")
        page.click("button[data-label='block']")
        expect(progress).to_have_text("2 / 3 labelled")
        assert saved() == [("v1", "diagonal", "human"), ("v3", "block", "human")]
        page.keyboard.press("u")  # undo the block label: v3 is shown again
        expect(progress).to_have_text("1 / 3 labelled")
        expect(meta).to_have_text("v3 (9 word pieces), annotator ann")
        assert saved() == [("v1", "diagonal", "human")]
        server.shutdown()
        server.server_close()

        # a new server resumes at the first map this annotator has not labelled
        server, url = serve(maps, labels)
        page.goto(url)
        expect(progress).to_have_text("1 / 3 labelled")
        expect(meta).to_have_text("v2 (9 word pieces), annotator ann")
        page.keyboard.press("1")
        expect(progress).to_have_text("2 / 3 labelled")
        page.keyboard.press("4")
        expect(progress).to_have_text("3 / 3 labelled")
        expect(meta).to_have_text("All sampled maps are labelled. Thank you!")
        assert saved() == [
            ("v1", "diagonal", "human"), ("v2", "vertical", "human"), ("v3", "block", "human")
        ]  # fmt: skip
        browser.close()
        server.shutdown()
        server.server_close()


# --- the stages on hand-built stores ----------------------------------------------------------


def test_stages_sample_train_apply(tmp_path, one_thread, micro_stage):
    """patterns_sample -> labels by hand -> patterns_train -> patterns_apply (micro profile)."""
    from stages import patterns_apply, patterns_train
    from tools import patterns_sample

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
            tmp_path / "outputs" / "attention" / task / "seed42.parquet",  # the primary seed
            records,
            model_id="tiny_random",
            num_layers=2,
            num_heads=3,
            config_hash="x",
        )
    settings = {
        "patterns.labels_from": ["tiny_random"],
        "patterns.sample.per_class": 10,
        "patterns.classifier.folds": 3,
        "patterns.classifier.ensemble": 2,
        "patterns.classifier.bootstrap_resamples": 50,
    }
    stage = micro_stage(settings=settings)

    patterns_sample.run(stage)
    folder = tmp_path / "data" / "annotations" / "tiny_random"
    sample = pd.read_csv(folder / "sample.csv")
    assert set(sample["layer"]) <= {1, 2} and set(sample["head"]) <= {1, 2, 3}  # from 1
    assert sample["rule"].value_counts().max() <= 10
    sheets = sorted((tmp_path / "outputs" / "labelling" / "tiny_random" / "v0001").glob("*.png"))
    assert len(sheets) == -(-len(sample) // 6)
    # an annotator who sees the hand-built maps labels each head by its kind
    visual = [
        (m, kinds[layer - 1][head - 1], "visual", "tester", "2026-11-23")
        for m, layer, head in zip(sample["map_id"], sample["layer"], sample["head"], strict=True)
    ]
    write_labels_csv(folder / "visual.csv", visual)
    patterns_sample.run(stage)  # a second round never draws a map again
    again = pd.read_csv(folder / "sample.csv")
    assert (
        len(again) > len(sample)
        and not again.duplicated(["variant", "task", "example_id", "layer", "head"]).any()
    )
    assert len(read_map_set(folder / "maps.npz")) == len(again)

    patterns_train.run(stage)
    metrics = pd.read_json(tmp_path / "outputs" / "metrics" / "patterns_train.json", typ="series")
    assert metrics["labels.maps"] == len(sample)  # only labelled maps train
    assert (
        metrics["cnn.accuracy_ci_low"] <= metrics["cnn.accuracy"] <= metrics["cnn.accuracy_ci_high"]
    )
    assert metrics["rule.accuracy"] > 0.9  # the hand-built maps are clean
    cv = pd.read_csv(tmp_path / "outputs" / "plots" / "patterns_train" / "cross_validation.csv")
    groups = cv.merge(sample, on=["map_id", "variant", "task"])
    assert len(cv) == len(sample) and groups["map_id"].is_unique
    assert (
        tmp_path / "outputs" / "figures" / "patterns_train" / "fig1_pattern_examples.png"
    ).exists()

    patterns_apply.run(stage)
    applied = tmp_path / "outputs" / "plots" / "patterns_apply" / "seed42"
    shares = pd.read_csv(applied / "shares.csv")
    assert len(shares) == 2 * 2 * len(CLASSES)  # tasks x variants x classes
    np.testing.assert_allclose(shares.groupby(["task", "variant"])["share"].sum(), 1.0, atol=1e-5)
    assert (shares["ci_low"] <= shares["share"] + 1e-9).all()
    assert (shares["share"] <= shares["ci_high"] + 1e-9).all()
    predictions = pd.read_parquet(tmp_path / "outputs/patterns/predictions/seed42.parquet")
    assert len(predictions) == 2 * 2 * 8 * 6  # tasks x variants x num_examples x heads
    assert set(predictions["layer"]) == {1, 2} and set(predictions["head"]) == {1, 2, 3}
    apply_metrics = pd.read_json(
        tmp_path / "outputs" / "metrics" / "patterns_apply" / "seed42.json", typ="series"
    )
    planted = [kinds[layer - 1][head - 1] for layer, head in predictions[["layer", "head"]].values]
    assert (predictions["label"] == planted).mean() >= 0.9  # the planted kinds come back
    shares_of = {  # per (task, variant), each class's share under each network's labels
        column: predictions.groupby(["task", "variant"])[column]
        .value_counts(normalize=True)
        .unstack(fill_value=0.0)
        for column in ("label", "label_seed2")
    }
    first, second = shares_of["label"].align(shares_of["label_seed2"], fill_value=0.0)
    assert apply_metrics["seed_stability.max_share_change"] == pytest.approx(
        (first - second).abs().to_numpy().max(), abs=1e-4
    )
    vertical = pd.read_csv(applied / "vertical.csv")
    assert len(vertical) == 2 * 2 * 2  # tasks x variants x statistics
    for statistic in ("vertical_margin", "vertical_on_special"):
        key = f"rte.pretrained.{statistic}"
        keys = {key, f"{key}_ci_low", f"{key}_ci_high"}
        defined = statistic == "vertical_margin" or apply_metrics["rte.pretrained.vertical"] > 0
        # undefined (no map called vertical): left out, since NaN never diffs equal
        assert keys <= set(apply_metrics.index) if defined else not keys & set(apply_metrics.index)
    margin = shares.pivot_table("share", ["task", "variant"], "class").loc[("rte", "pretrained")]
    assert apply_metrics["rte.pretrained.vertical_margin"] == pytest.approx(
        margin["vertical"] - margin.drop("vertical").max(), abs=1e-4
    )
    assert (
        tmp_path / "outputs" / "figures" / "patterns_apply" / "seed42" / "fig2_pattern_shares.png"
    ).exists()

    # a round near the trained classifier's boundaries, then training on two label folders
    boundaries = ["vertical|vertical+diagonal", "block|heterogeneous"]
    near = {**settings, "patterns.sample.boundaries": boundaries, "patterns.sample.per_class": 4}
    patterns_sample.run(micro_stage(settings=near))
    rounds = read_sample(folder / "sample.csv")
    latest = rounds[rounds["round"] == 3]
    assert len(rounds) == len(again) + len(latest) and 0 < len(latest) <= 8
    assert set(latest["stratum"]) <= {f"boundary:{b}" for b in boundaries}
    assert set(latest["map_id"]).isdisjoint(again["map_id"])
    shutil.copytree(folder, folder.parent / "tiny_copy")
    shutil.copytree(folder, folder.parent / "tiny_other")  # a folder it never learns from
    patterns_train.run(micro_stage(settings={**settings, "patterns.labels_from": [
        "tiny_random", "tiny_copy"]}))  # fmt: skip
    pooled = pd.read_json(tmp_path / "outputs" / "metrics" / "patterns_train.json", typ="series")
    assert pooled["labels.maps"] == 2 * len(sample)
    for name in ("tiny_random", "tiny_copy"):
        key = f"cnn.{name}.accuracy"
        assert pooled[f"{key}_ci_low"] <= pooled[key] <= pooled[f"{key}_ci_high"]
    # scored on the unseen folder as the saved classifier classifies its maps
    other = folder.parent / "tiny_other"
    called = classify_map_set(other / "maps.npz", tmp_path / "outputs" / "patterns" / "cnn.pt")
    truth = resolve(read_labels(other, read_map_set(other / "maps.npz")))
    both = truth.merge(called, left_on="map_id", right_on="id")
    assert len(both) == len(sample)
    assert pooled["cnn_unseen.tiny_other.accuracy"] == pytest.approx(
        (both["label_x"] == both["label_y"]).mean(), abs=1e-4
    )
    by_round = pd.read_csv(
        tmp_path / "outputs" / "plots" / "patterns_train" / "recall_by_round.csv"
    )
    every = by_round[by_round["class"] == "all"]
    assert sorted(every["labels_from"]) == ["tiny_copy", "tiny_random"]
    assert (every["labelled"] == len(sample)).all()  # round 1: the maps labelled


def test_disputed_sheets_hold_exactly_the_maps_two_annotators_label_differently(tmp_path):
    from pipeline.kovaleva.patterns.disputed import disputed_maps, main

    maps, _ = synthetic_set(6, seed=1)
    write_map_set(tmp_path / "maps.npz", {f"m{i}": maps[i] for i in range(6)})
    day = "2026-11-25"
    write_labels_csv(
        tmp_path / "visual.csv",
        [
            *[(f"m{i}", "vertical", "visual", "ann-a", day) for i in range(6)],
            ("m0", "vertical", "visual", "ann-b", day),  # agrees
            ("m1", "diagonal", "visual", "ann-b", day),  # disputed
            ("m2", "vertical", "visual", "ann-b", day),
            ("m3", "block", "visual", "ann-b", day),  # disputed
            ("m4", "diagonal", "visual", "ann-c", day),  # ann-b never saw m4 or m5
            ("m1", "vertical", "visual", "ann-b", day),  # ann-b changed their mind: latest wins
        ],
    )
    assert disputed_maps(tmp_path, "ann-a", "ann-b", seed=0) == ["m3"]
    assert sorted(disputed_maps(tmp_path, "ann-a", "ann-c", seed=0)) == ["m4"]
    with pytest.raises(PipelineError, match="no label by ann-z"):
        disputed_maps(tmp_path, "ann-a", "ann-z", seed=0)
    main([str(tmp_path), "--between", "ann-a", "ann-b", "--out", str(tmp_path / "sheets")])
    assert [p.name for p in (tmp_path / "sheets").iterdir()] == ["sheet_001.png"]


REPO = Path(__file__).resolve().parent.parent
AGREEMENT_ROW = re.compile(
    r"^\| (\w) vs (\w)(?: \([^)]*\))? \| (\d+) \| ([0-9.]+) \| ([0-9.]+|see [^|]*) \|$", re.M
)


@pytest.mark.parametrize("model", ["minilm_l6", "mpnet_base"])
def test_the_label_folders_agreement_tables_equal_their_label_files(model):
    """Each `x vs y` row of data/annotations/<model>/README.md recomputes from the folder's
    label files: the maps both annotators labelled, their raw agreement and kappa (3 decimals)."""
    folder = REPO / "data" / "annotations" / model
    labels = read_labels(folder, read_map_set(folder / "maps.npz"))
    rows = AGREEMENT_ROW.findall((folder / "README.md").read_text())
    assert len(rows) >= 1
    for first, second, maps, agreement, kappa_text in rows:
        pairs = paired_labels(labels, f"annotator-{first}", f"annotator-{second}")
        assert len(pairs) == int(maps), (first, second)
        assert f"{raw_agreement(pairs['first'], pairs['second']):.3f}" == agreement
        if not kappa_text.startswith("see"):
            assert f"{kappa(pairs['first'], pairs['second']):.3f}" == kappa_text, (first, second)
