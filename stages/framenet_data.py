"""framenet_data: the FrameNet 1.5 sentences that pass the paper's filter, for Figs. 3-4.

Reads the release (`analysis.framenet.source`, by default framenet-1.5.tgz in the shared
data folder) without unpacking it, keeps the sentences of the lexical-unit files that pass
the filter (pipeline/framenet.py), and writes only those to data/framenet/sentences.jsonl,
with their counts in outputs/metrics/framenet_data.json.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

from pipeline.core.config import shared_data_dir
from pipeline.core.io import write_json, write_text
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.framenet import FilterRule, read_sentences, to_record

log = logging.getLogger(__name__)


def filter_rule(settings) -> FilterRule:
    return FilterRule(
        max_tokens=settings.max_tokens,
        max_fe_tokens=settings.max_fe_tokens,
        target_window=settings.target_window,
    )


def run(stage: StageRun) -> None:
    settings = stage.cfg.framenet
    source = shared_data_dir(stage.cfg) / Path(settings.source)  # an absolute source wins
    sentences = read_sentences(source, filter_rule(settings))
    lines = "".join(json.dumps(to_record(s), sort_keys=True) + "\n" for s in sentences)
    write_text(stage.data_out / "framenet" / "sentences.jsonl", lines)
    fe_counts = Counter(len(s.core_fes) for s in sentences)
    write_json(
        stage.out("metrics", "framenet_data.json"),
        {
            "sentences": len(sentences),
            "frames": len({s.frame for s in sentences}),
            "lexical_units": len({s.lu for s in sentences}),
            **{f"with_{k}_core_fes": v for k, v in sorted(fe_counts.items())},
        },
    )
    log.info("FrameNet: %d sentences pass the filter (from %s)", len(sentences), source)


if __name__ == "__main__":
    stage_main(run)
