"""The pattern stages on hand-built stores, the disputed maps' sheets, and the label folders'
agreement tables."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest

from pipeline.attention.store import TokenInfo
from pipeline.attention.store_writer import write_attention
from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.agreement import (
    kappa,
    paired_labels,
    raw_agreement,
)
from pipeline.kovaleva.patterns.apply import classify_map_set
from pipeline.kovaleva.patterns.labels import (
    read_labels,
    read_sample,
    resolve,
)
from pipeline.kovaleva.patterns.mapsets import read_map_set, write_map_set
from tests.support.paths import REPO
from tests.support.pattern_maps import (
    pair_tokens,
    pattern_map,
    synthetic_set,
    write_labels_csv,
)


@pytest.mark.slow  # 15-50 s end to end: run with `pytest -m slow` (CI, time allowing)
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
    groups = cv.merge(sample, on=["map_id", "variant", "task", "example_id"])
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


ROUND_SECTION = re.compile(r"\(round (\d+), `v\d+`-`v\d+`\)\n(.*?)(?=\n## |\Z)", re.S)
BOUNDARY_COUNTS = re.compile(
    r"of the (\d+)\s+maps\s+at\s+([a-z+]+\|[a-z+]+),\s+((?:\d+\s+[a-z+]+(?:,\s+|\s+and\s+)?)+)"
)


@pytest.mark.parametrize("model", ["minilm_l6", "mpnet_base"])
def test_the_label_folders_boundary_counts_equal_their_resolved_labels(model):
    """Each boundary round's README sentence `of the N maps at a|b, n1 label1, ... and nk
    labelk` recounts from the folder's resolved labels of that round and stratum."""
    folder = REPO / "data" / "annotations" / model
    resolved = resolve(read_labels(folder, read_map_set(folder / "maps.npz")))
    origin = read_sample(folder / "sample.csv").merge(resolved, on="map_id")
    checked = 0
    for round_, text in ROUND_SECTION.findall((folder / "README.md").read_text()):
        for total, boundary, counts in BOUNDARY_COUNTS.findall(text):
            mine = origin[
                (origin["round"] == int(round_)) & (origin["stratum"] == f"boundary:{boundary}")
            ]
            said = {label: int(n) for n, label in re.findall(r"(\d+)\s+([a-z+]+)", counts)}
            assert len(mine) == int(total), (round_, boundary)
            assert said == mine["label"].value_counts().to_dict(), (round_, boundary)
            checked += 1
    assert checked >= 2
