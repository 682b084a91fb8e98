"""The registry's digest pins every step from a stage's output to a verdict: pooling seeds,
the t quantile, `settle`, the power check, a gate's cut-off and a profile's settings each
move it when changed; a pure move or rename of the code does not."""

from __future__ import annotations

import shutil

from scipy.stats import t as student_t

from pipeline.claims import evaluate, measurement_pins, rules, seeds, validity
from pipeline.claims.measurement_pins import settings
from pipeline.claims.registry import registered_claims, registry_digest


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
