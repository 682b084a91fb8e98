"""framenet: relation-specific heads with FrameNet (Kovaleva et al. Figs. 3-4).

Runs the pre-trained model on the sentences of framenet_data (a seeded sample of
`framenet.num_sentences`), scores each head by the maximum attention from the core
frame-element pieces to the lexical-unit (target) pieces, averages over sentences (with 95%
bootstrap intervals over sentences), and writes
outputs/plots/framenet/{heads,top_heads,top_head_maps}.csv, the figures
outputs/figures/framenet/{fig3_heads,fig4_top_heads}.png and outputs/metrics/framenet.json.
Layers and heads are numbered from 1 in every output. The analysis is
pipeline.kovaleva.framenet.
"""

from __future__ import annotations

from dataclasses import asdict

from pipeline.attention.encoder import load_attached_encoder
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.figures import framenet_figures
from pipeline.kovaleva.framenet import score_heads
from pipeline.kovaleva.framenet_data import load_sentences


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.settings("framenet")
    path = stage.data("framenet", "sentences.jsonl")
    sentences = load_sentences(path, settings.num_sentences, cfg.seed)
    model, tokenizer = load_attached_encoder(stage.settings("model"), stage.device, cfg.seed)
    result = score_heads(
        model, tokenizer, sentences, settings, max_length=cfg.shared.max_length, seed=cfg.seed
    )
    stage.write_outputs(
        "framenet",
        tables=result.tables,
        figures=framenet_figures(result, settings),
        metrics=result.metrics,
        config={"model": cfg.model.name, "sentences": result.sentences, **asdict(settings)},
    )


if __name__ == "__main__":
    stage_main(run)
