"""The claims registry's digest pins how each claim is measured: a claim-relevant setting,
a label the pattern classifier learns from or a measure function's behaviour moves it;
moving or renaming code does not."""

from __future__ import annotations

import dataclasses
import shutil

import yaml

from pipeline.claims import measurement_pins
from pipeline.claims.measurement_pins import (
    GATE_SETTINGS,
    family,
    settings,
    settings_by_family,
)
from pipeline.claims.registry import registered_claims, registry_digest
from pipeline.claims.rules import Estimate
from pipeline.dag.declarations import STAGES


def test_changing_the_label_folders_moves_the_digest(tmp_path, monkeypatch, committed):
    conf = tmp_path / "conf"
    shutil.copytree(measurement_pins.CONF, conf)
    patterns = conf / "patterns" / "default.yaml"
    declared = yaml.safe_load(patterns.read_text())
    assert declared["labels_from"] == ["minilm_l6", "mpnet_base"]
    patterns.write_text(patterns.read_text().replace("[minilm_l6, mpnet_base]", "[minilm_l6]"))
    monkeypatch.setattr(measurement_pins, "CONF", conf)
    assert registry_digest() != committed


def test_changing_one_label_moves_the_digest_and_a_readme_does_not(
    tmp_path, monkeypatch, committed
):
    labels = tmp_path / "data" / "annotations"
    shutil.copytree(measurement_pins.ROOT / "data" / "annotations", labels)
    monkeypatch.setattr(measurement_pins, "ROOT", tmp_path)
    (labels / "mpnet_base" / "README.md").write_text("another text")
    assert registry_digest() == committed
    visual = labels / "mpnet_base" / "visual.csv"
    lines = visual.read_text().splitlines(keepends=True)
    first = lines[1].split(",")
    first[1] = "block" if first[1] != "block" else "vertical"
    visual.write_text("".join([lines[0], ",".join(first), *lines[2:]]))
    assert registry_digest() != committed


def test_the_files_pinned_are_those_the_analyses_declare(monkeypatch):
    declared = measurement_pins.pinned_files()
    assert [p.setting for p in declared] == ["patterns.labels_from"]
    folder = measurement_pins.ROOT / declared[0].under / "minilm_l6"
    held = {file for file in declared[0].files if (folder / file).exists()}
    assert held == {"visual.csv", "sample.csv", "stratifier.pt"}  # human.csv: none yet
    pins = measurement_pins.label_pins()
    assert set(pins) == {"minilm_l6", "mpnet_base"} and set(pins["minilm_l6"]) == held
    fewer = [dataclasses.replace(declared[0], files=("stratifier.pt",))]
    monkeypatch.setattr(measurement_pins, "pinned_files", lambda: fewer)
    assert {folder: set(files) for folder, files in measurement_pins.label_pins().items()} == {
        "minilm_l6": {"stratifier.pt"},
        "mpnet_base": set(),  # no share round
    }


def _with_measure(claims, name, measure):
    return [dataclasses.replace(c, measure=measure(c.measure)) if c.name == name else c
            for c in claims]  # fmt: skip


def test_changing_what_one_measure_function_computes_moves_the_digest(fixture_claims, committed):
    def shifted(original):
        def measure(out, seed):
            m = original(out, seed)
            return Estimate(m.statistic + 0.01, m.ci_low + 0.01, m.ci_high + 0.01)

        return measure

    changed = _with_measure(fixture_claims, "kovaleva.last_layers_change_most.mrpc", shifted)
    assert registry_digest(changed) != committed


def test_moving_or_renaming_a_measure_function_leaves_the_digest(fixture_claims, committed):
    def moved(original):
        def renamed_elsewhere(out, seed):  # another name, in another module
            return original(out, seed)

        return renamed_elsewhere

    changed = _with_measure(fixture_claims, "kovaleva.last_layers_change_most.mrpc", moved)
    assert registry_digest(changed) == committed


def test_every_registered_claim_names_its_settings():
    families = {family(c) for c in registered_claims()}
    declared = settings_by_family()
    assert families <= set(declared)
    assert not set(declared) - families  # no entry for a claim that is gone
    types_recur = next(c for c in registered_claims() if c.name == "kovaleva.types_recur.mrpc")
    assert settings(types_recur)["quick"]["patterns.num_examples"] == 100


def test_the_claims_stage_declares_every_settings_file_it_reads():
    """The registry composes conf/ under each profile: the stage depends on all of it."""
    claims = next(stage for stage in STAGES if stage.name == "claims")
    assert "conf" in claims.inputs
    assert all(k.split(".")[0] in measurement_pins.composed("quick") for k in GATE_SETTINGS)
