"""The shared core: a killed writer's temporaries go away with the next write; stage timings
stay out of the metrics files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from omegaconf import OmegaConf

from pipeline.core.io import write_json
from pipeline.core.params import compose_params

REPO = Path(__file__).resolve().parent.parent


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    target = tmp_path / "sst2.parquet"
    writer = textwrap.dedent(
        f"""
        import time
        from pipeline.core.io import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_bytes(b"half")
            print("writing", flush=True)
            time.sleep(60)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    assert process.stdout.readline().strip() == "writing"
    os.kill(process.pid, signal.SIGKILL)  # kill -9: no cleanup runs
    process.wait()
    leftovers = list(tmp_path.glob(".sst2.parquet.*.tmp"))
    assert leftovers and not target.exists()

    (tmp_path / ".other.json.abc.tmp").write_text("{}")  # another file's temporary stays
    write_json(target, {"done": True})
    assert json.loads(target.read_text()) == {"done": True}
    assert not list(tmp_path.glob(".sst2.parquet.*.tmp"))
    assert (tmp_path / ".other.json.abc.tmp").exists()


def test_a_stage_writes_its_time_to_timings_not_metrics(tmp_path: Path) -> None:
    cfg = OmegaConf.create(compose_params())
    cfg.paths.outputs = str(tmp_path / "outputs")
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    stage = tmp_path / "stages" / "tiny_stage.py"
    stage.parent.mkdir()
    (stage.parent / "__init__.py").write_text("")
    stage.write_text(
        textwrap.dedent(
            """
            from pipeline.core.io import write_json
            from pipeline.core.stage import stage_main

            def run(stage):
                write_json(stage.out("metrics", "tiny.json"), {"value": 1})

            if __name__ == "__main__":
                stage_main(run)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    subprocess.run(
        [sys.executable, "-m", "stages.tiny_stage", "--dvc", "rte"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    assert json.loads((tmp_path / "outputs/metrics/tiny.json").read_text()) == {"value": 1}
    timing = json.loads((tmp_path / "outputs/timings/tiny_stage/rte.json").read_text())
    assert timing["stage"] == "tiny_stage" and timing["seconds"] >= 0


def test_settings_come_from_the_keys_of_the_same_names() -> None:
    from dataclasses import dataclass

    from pipeline.core.config import settings_from

    @dataclass(frozen=True)
    class Loop:
        epochs: int
        seed: int

    node = OmegaConf.create({"epochs": 3, "seed": 1, "other": "ignored"})
    assert settings_from(Loop, node, seed=7) == Loop(epochs=3, seed=7)
    assert settings_from(Loop, node) == Loop(epochs=3, seed=1)
