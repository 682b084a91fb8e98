"""The registry's digest pins every step from a stage's output to a verdict: pooling seeds,
the t quantile, `settle`, the seeds' disagreement, the power check, a gate's cut-off, a
profile's settings (its seeds, rows, fine-tuning recipe), a claim's declared fields and
every input a rule reads each move it when changed; a pure move or rename does not."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from scipy.stats import t as student_t

from pipeline.claims import (
    evaluate,
    measurement_pins,
    registry,
    rules,
    seeds,
    validity,
    verdict_pins,
)
from pipeline.claims.measurement_pins import estimate_pin, settings
from pipeline.claims.registry import registered_claims, registry_digest
from pipeline.claims.rules import Estimate


class _Normal:
    """scipy's t with every quantile replaced by the normal 1.96."""

    @staticmethod
    def ppf(q, df):
        return 1.96


def test_pooling_the_first_seed_only_moves_the_digest(monkeypatch, fixture_claims, committed):
    monkeypatch.setattr(evaluate, "across_seeds", lambda per_seed: per_seed[0])
    assert registry_digest(fixture_claims) != committed


def test_a_normal_quantile_over_seeds_moves_the_digest(monkeypatch, fixture_claims, committed):
    monkeypatch.setattr(seeds, "t", _Normal)
    assert registry_digest(fixture_claims) != committed


def test_settle_off_moves_the_digest(monkeypatch, fixture_claims, committed):
    monkeypatch.setattr(evaluate, "settle", lambda verdict, measured, rule=None: (verdict, ""))
    assert registry_digest(fixture_claims) != committed


def test_another_power_moves_the_digest(monkeypatch, fixture_claims, committed):
    monkeypatch.setattr(rules, "Z_POWER", 1.2816)  # 90% power
    monkeypatch.setattr(evaluate, "Z_POWER", 1.2816)
    assert registry_digest(fixture_claims) != committed


def test_a_gates_cut_off_moves_the_digest(monkeypatch, fixture_claims, committed):
    monkeypatch.setattr(validity, "LEARNED_ABOVE", 0.01)
    assert registry_digest(fixture_claims) != committed


def test_a_profiles_setting_moves_the_digest_and_a_comment_does_not(
    tmp_path, monkeypatch, fixture_claims, committed
):
    conf = tmp_path / "conf"
    shutil.copytree(measurement_pins.CONF, conf)
    monkeypatch.setattr(measurement_pins, "CONF", conf)
    standard = conf / "experiment" / "standard.yaml"
    standard.write_text(standard.read_text() + "# a comment\n")
    assert registry_digest(fixture_claims) == committed
    text = standard.read_text()
    assert "  num_examples: null     # quick: 96;" in text
    standard.write_text(
        text.replace("  num_examples: null     # quick: 96;", "  num_examples: 200 #")
    )
    assert registry_digest(fixture_claims) != committed


def test_each_profile_composes_its_own_values():
    removal = next(c for c in registered_claims() if c.name == "kovaleva.heads_removal_helps.mrpc")
    by_profile = settings(removal)
    assert set(by_profile) == set(measurement_pins.PROFILES)
    assert by_profile["quick"]["ablate.num_examples"] == 96
    assert by_profile["standard"]["ablate.num_examples"] is None  # every dev row


def test_moving_or_renaming_the_pooling_leaves_the_digest(monkeypatch, fixture_claims, committed):
    pool = seeds.across_seeds

    def pooled_elsewhere(per_seed):  # another name, in another module
        return pool(per_seed)

    monkeypatch.setattr(evaluate, "across_seeds", pooled_elsewhere)
    monkeypatch.setattr(seeds, "t", student_t)  # the same quantile, another reference
    assert registry_digest(fixture_claims) == committed


def _conf_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """conf/ copied under `tmp_path`, read by the registry in its place."""
    conf = tmp_path / "conf"
    shutil.copytree(measurement_pins.CONF, conf)
    monkeypatch.setattr(measurement_pins, "CONF", conf)
    return conf


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("experiment/standard.yaml", "seeds: [42, 43, 44]", "seeds: [42]"),
        ("experiment/standard.yaml", "max_train_rows: 1500", "max_train_rows: 900"),
        ("prepare/default.yaml", "max_train_rows: 600", "max_train_rows: 900"),
        ("experiment/quick.yaml", "    mrpc: 3", "    mrpc: 4"),
    ],
    ids=["standard seeds", "standard train rows", "quick train rows", "quick epochs by task"],
)
def test_a_judged_profiles_seeds_and_recipe_move_the_digest(
    tmp_path, monkeypatch, fixture_claims, committed, file, old, new
):
    path = _conf_copy(tmp_path, monkeypatch) / file
    text = path.read_text()
    assert text.count(old) == 1, f"conf/{file} no longer holds {old!r}"
    path.write_text(text.replace(old, new))
    assert registry_digest(fixture_claims) != committed


def test_moving_conf_and_the_fixture_leaves_the_digest(
    tmp_path, monkeypatch, fixture_claims, committed
):
    _conf_copy(tmp_path, monkeypatch)
    fixture = tmp_path / "elsewhere" / "fixture"
    shutil.copytree(measurement_pins.FIXTURE, fixture)
    assert registry_digest(fixture_claims, fixture) == committed


def _redeclared(monkeypatch: pytest.MonkeyPatch, name: str, **changes: object) -> None:
    """The registered claims declared with `changes` to the claims whose id starts `name`."""
    declared = registry.declared_claims

    def changed(scope):
        return [
            dataclasses.replace(c, **changes) if c.name.startswith(name) else c
            for c in declared(scope)
        ]

    monkeypatch.setattr(registry, "declared_claims", changed)


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("extension.heterogeneous_minority.", {"extension": False}),
        ("kovaleva.table1_order.", {"finetuned": ()}),
        ("kovaleva.heads_removal_helps.", {"gated": False}),
    ],
    ids=["extension", "finetuned", "gated"],
)
def test_a_claims_declared_fields_move_the_digest(
    monkeypatch, fixture_claims, committed, name, changes
):
    _redeclared(monkeypatch, name, **changes)
    assert any(c.name.startswith(name) for c in registry.registered_claims())
    assert registry_digest(fixture_claims) != committed


def test_disabling_the_seed_dependent_verdict_moves_the_digest(
    monkeypatch, fixture_claims, committed
):
    overall = evaluate._overall

    def pooled_only(claim, per_seed, testable, dev):  # the seeds' disagreement ignored
        if not testable:
            return overall(claim, per_seed, testable, dev)
        pooled = evaluate.across_seeds([j.measured for j in testable.values()])
        return evaluate.judge(claim, pooled, "", dev)

    monkeypatch.setattr(evaluate, "_overall", pooled_only)
    assert registry_digest(fixture_claims) != committed


def test_every_input_a_rule_reads_is_pinned():
    """A statistic's critical value, its evidence and whether it is resolved enter the pin
    (the fixture's and any other), its note (words) does not."""
    measured = Estimate(0.01, 0.0, 0.02, evidence={"rows": 96.0}, unresolved="u")
    pin = estimate_pin(measured)
    moved = [
        dataclasses.replace(measured, critical=2.5),
        dataclasses.replace(measured, evidence={"rows": 97.0}),
        dataclasses.replace(measured, unresolved=""),
        dataclasses.replace(measured, ci_high=0.03),
    ]
    assert all(estimate_pin(m) != pin for m in moved)
    assert estimate_pin(dataclasses.replace(measured, note="reworded")) == pin


def test_how_readings_combine_moves_the_digest(monkeypatch, fixture_claims, committed):
    """A finding that one reading leaves untested decided from the other alone."""
    from pipeline.claims import readings

    combined = readings.combined

    def lenient(verdicts, reasons):
        tested = {n: v for n, v in verdicts.items() if v != "not testable"} or verdicts
        return combined(tested, reasons)

    monkeypatch.setattr(verdict_pins, "combined", lenient)
    assert registry_digest(fixture_claims) != committed
