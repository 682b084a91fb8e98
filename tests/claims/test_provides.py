"""What the analyses lend the claims engine (pipeline/claims/provides.py): the engine gates,
scopes and counts rows by what their `PROVIDES` declare, and a gate declared twice, or
missing where a claim needs it, fails in one line."""

from __future__ import annotations

import pytest

from pipeline.claims import provides
from pipeline.claims.claim import Claim, Source
from pipeline.claims.evaluate import dev_rows, gate_failures, scope_of
from pipeline.claims.outputs import SyntheticOutputs
from pipeline.claims.provides import LearnedGate, Provides, Unit
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.thresholds import DIRECTION
from pipeline.claims.validity import Learning, Room
from pipeline.core.errors import PipelineError

OUT = SyntheticOutputs({})
ABOVE = Estimate(0.3, 0.25, 0.35)  # a margin whose interval lies above 0
STRADDLES = Estimate(0.03, -0.02, 0.08)


def _claim(headroom: float | None = None) -> Claim:
    return Claim(
        name="toy.finding.sst2",
        source=Source("Toy 2026", "Sec. 1", "a toy statement"),
        finding="a toy finding",
        statistic="toy",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: ABOVE,
        finetuned=("sst2",),
        headroom=headroom,
    )


def _learning(over_chance: Estimate) -> LearnedGate:
    learning = Learning(Estimate(0.8, 0.75, 0.85), over_chance, ABOVE, 0.5, 0.5)
    return LearnedGate(read=lambda out, task, seed: learning, case=lambda task, seed, ok: {})


def _declared(monkeypatch: pytest.MonkeyPatch, **by_analysis: Provides) -> None:
    monkeypatch.setattr(provides, "provided", lambda: by_analysis)


def test_the_gates_read_what_the_declaring_analysis_reads(monkeypatch):
    _declared(monkeypatch, toy=Provides(learned=_learning(STRADDLES)))
    assert gate_failures(_claim(), OUT, 42).startswith(
        "the sst2 model (seed 42) did not learn sst2: dev 0.800 [0.750, 0.850]"
    )
    room = Room("accuracy", 96, 0.5, Estimate(0.55, 0.45, 0.65))
    _declared(
        monkeypatch,
        toy=Provides(learned=_learning(ABOVE)),
        other=Provides(room=lambda out, task, seed: room),
    )
    assert gate_failures(_claim(), OUT, 42) == ""  # learned, and no headroom asked
    assert gate_failures(_claim(headroom=0.01), OUT, 42).startswith(
        "the sst2 model (seed 42) clears chance on the 96 ablation rows by a lower bound of -0.050"
    )


def test_a_claims_scope_and_dev_rows_come_from_the_declarations(monkeypatch):
    colour = Unit("colour", lambda out: ("red", "blue"))
    _declared(monkeypatch, toy=Provides(units=(colour,), dev_rows=lambda out, task: 872.0))
    assert scope_of(OUT, ["sst2"]).units == {"colour": ("red", "blue")}
    assert scope_of(OUT, ["sst2"]).of("colour") == ("red", "blue")
    assert colour.template() == "<colour>"
    assert dev_rows(OUT, _claim()) == 872.0


def test_a_gate_declared_twice_fails_in_one_line(monkeypatch):
    _declared(
        monkeypatch,
        toy=Provides(learned=_learning(ABOVE)),
        other=Provides(learned=_learning(ABOVE)),
    )
    with pytest.raises(PipelineError, match="the learning gate is declared by toy and other"):
        provides.lent()
    unit = Unit("colour", lambda out: ())
    _declared(monkeypatch, toy=Provides(units=(unit,)), other=Provides(units=(unit,)))
    with pytest.raises(PipelineError, match="unit colour is declared twice"):
        provides.lent()


def test_a_claim_whose_gate_no_analysis_declares_fails_in_one_line(monkeypatch):
    _declared(monkeypatch)
    with pytest.raises(PipelineError, match=r"toy\.finding\.sst2 reads fine-tuned models but no"):
        gate_failures(_claim(), OUT, 42)
    _declared(monkeypatch, toy=Provides(learned=_learning(ABOVE)))
    with pytest.raises(PipelineError, match=r"toy\.finding\.sst2 needs headroom but no analysis"):
        gate_failures(_claim(headroom=0.01), OUT, 42)
