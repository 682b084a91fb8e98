"""framenet_data: the FrameNet 1.5 sentences that pass the paper's filter, for Figs. 3-4.

Reads the release (`framenet.source`, by default framenet-1.5.tgz in the shared data
folder) without unpacking it, keeps the sentences of the lexical-unit files that pass the
filter (pipeline/kovaleva/framenet_data.py), and writes only those to
data/framenet/sentences.jsonl, with their counts in outputs/metrics/framenet_data.json.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pipeline.core.io import write_text
from pipeline.core.stage import StageRun, stage_main
from pipeline.data import sources
from pipeline.kovaleva.framenet_data import read_sentences, sentence_counts, to_jsonl

log = logging.getLogger(__name__)


def run(stage: StageRun) -> None:
    settings = stage.settings("framenet")
    release = sources.framenet(stage.cfg.paths.shared_data, settings)
    release.check()
    source = release.folder / Path(settings.source).name
    sentences = read_sentences(source, settings)
    data = stage.inputs_out("framenet_data")
    write_text(data / "framenet" / "sentences.jsonl", to_jsonl(sentences))
    stage.write_outputs("framenet_data", metrics=sentence_counts(sentences))
    log.info("FrameNet: %d sentences pass the filter (from %s)", len(sentences), source)


if __name__ == "__main__":
    stage_main(run)
