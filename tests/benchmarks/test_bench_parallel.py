"""The parallel benchmark reads the runner's own progress display: each stage's span, and the
chain of stages that bounded the run."""

from __future__ import annotations

import pytest

from benchmarks.bench_parallel import Span, bounding_chain, spans
from pipeline.scale.__main__ import Display


def test_spans_are_read_from_the_runners_display(monkeypatch, capsys):
    clock = iter([0.0, 1.0, 1.2, 65.4, 70.0, 130.0])  # the display's start, then one per event
    monkeypatch.setattr("pipeline.scale.__main__.time.monotonic", lambda: next(clock))
    display = Display(total=3)
    display("prepare", "up to date", "")
    display("finetune@mrpc-42", "started", "python -m stages.finetune --dvc mrpc --seed 42")
    display("finetune@mrpc-42", "ran", "1 min 04 s")
    display("ablate@mrpc-42", "started", "python -m stages.ablate --dvc mrpc --seed 42")
    display("ablate@mrpc-42", "failed", "exit 1")
    assert spans(capsys.readouterr().out) == {"finetune@mrpc-42": Span(1, 65)}


def test_the_bounding_chain_follows_the_dependency_each_stage_waited_for_last():
    upstream = {"a": [], "b": ["a"], "c": [], "d": ["b", "c"]}
    ran = {"a": Span(0, 10), "b": Span(10, 30), "c": Span(0, 40), "d": Span(40, 50)}
    assert bounding_chain(ran, upstream) == ["c", "d"]
    ran["b"] = Span(20, 45)  # b waited for a slot, then ended after c
    assert bounding_chain(ran, upstream) == ["a", "b", "d"]


@pytest.mark.parametrize("last", ["a", "c"])
def test_a_stage_without_upstream_ends_the_chain(last):
    ran = {"a": Span(0, 10), "c": Span(0, 5)}
    ran[last] = Span(0, 20)
    assert bounding_chain(ran, {"a": [], "c": []}) == [last]
