"""The pattern CNN: token roles and its input, training in worker processes, saving, weight
averaging and prediction."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.agreement import raw_agreement
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
from pipeline.kovaleva.patterns.roles import role_channels, sentence_ids
from pipeline.kovaleva.patterns.train import Job, fit, fit_all, schedule
from tests.support.pattern_maps import (
    SMALL_CNN,
    pair_tokens,
    synthetic_set,
)

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


def test_cnn_learns_a_synthetic_separable_set(one_thread):
    maps, labels = synthetic_set(200, seed=1)
    model = fit(inputs_of(maps[:160], 32), labels[:160], SMALL_CNN, seed=0)
    predicted = np.asarray(CLASSES)[
        predict([model], inputs_of(maps[160:], 32), pairs_of(maps[160:])).argmax(-1)
    ]
    assert raw_agreement(labels[160:], predicted) >= 0.8  # chance is 0.2


def test_two_trainings_give_the_same_bytes_whatever_the_workers(one_thread):
    """Each training spawns its own worker processes: the networks repeat byte for byte, with
    one worker or two, and each is the network `fit` trains on its rows in this process."""
    maps, labels = synthetic_set(60, seed=2)
    inputs = inputs_of(maps, 16)
    settings = replace(SMALL_CNN, epochs=2, average_last=1)
    jobs = [Job(np.arange(40), seed=0), Job(np.arange(20, 60), seed=1)]
    jobs += [Job(np.arange(60), seed=2), Job(np.arange(60), seed=3)]
    one = fit_all(inputs, labels, settings, jobs, workers=1)
    two = fit_all(inputs, labels, settings, jobs, workers=2)
    here = fit(inputs[jobs[1].rows], labels[jobs[1].rows], settings, jobs[1].seed)
    for mine, theirs in zip(one, two, strict=True):
        for name, tensor in mine.state_dict().items():
            assert torch.equal(tensor, theirs.state_dict()[name]), name
    for name, tensor in here.state_dict().items():
        assert torch.equal(tensor, one[1].state_dict()[name]), name
    assert not torch.equal(one[2].classify.weight, one[3].classify.weight)


def test_the_networks_on_most_rows_go_first():
    small, large = np.arange(40), np.arange(60)
    jobs = [Job(small, 0), Job(small, 1), Job(large, 2), Job(large, 3), Job(small, 4)]
    assert schedule(jobs) == [2, 3, 0, 1, 4]


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
