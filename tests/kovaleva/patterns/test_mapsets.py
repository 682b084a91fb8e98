"""Map sets (.npz) round trip with one-line errors, and the classify command on one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import (
    ORIGINAL_INPUT,
    inputs_of,
    pairs_of,
    predict,
    save_classifier,
)
from pipeline.kovaleva.patterns.mapsets import LabelledMap, read_map_set, write_map_set
from pipeline.kovaleva.patterns.train import fit
from tests.support.pattern_maps import (
    SMALL_CNN,
    synthetic_set,
)


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
