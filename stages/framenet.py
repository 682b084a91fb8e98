"""framenet: relation-specific heads with FrameNet (Kovaleva et al. Figs. 3-4).

Runs the pre-trained model on the sentences of framenet_data (a seeded sample of
`analysis.framenet.num_sentences`), scores each head by the maximum attention from the core
frame-element pieces to the lexical-unit (target) pieces, averages over sentences, and writes
outputs/plots/framenet/{heads,top_heads,top_head_maps}.csv, the figures
outputs/figures/framenet/{fig3_heads,fig4_top_heads}.png and outputs/metrics/framenet.json.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import torch
from omegaconf import OmegaConf
from tqdm import tqdm

from pipeline.attention.capture import capture_maps
from pipeline.attention.dump import Example
from pipeline.attention.store import TokenInfo
from pipeline.core.errors import PipelineError
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.batching import length_batches
from pipeline.data.sampling import seeded_subset
from pipeline.kovaleva.framenet import FrameSentence, from_record, piece_indices
from pipeline.kovaleva.measures import frame_score, mean_over_examples
from pipeline.kovaleva.tables import grid_table, head_frame
from pipeline.models.loading import load_attached_encoder
from pipeline.report.figures import head_heatmaps, map_panels

log = logging.getLogger(__name__)


def load_sentences(stage: StageRun, limit: int | None, seed: int) -> list[FrameSentence]:
    path = stage.data("framenet", "sentences.jsonl")
    if not path.exists():
        raise PipelineError(f"{path} not found; run the framenet_data stage first")
    sentences = [from_record(json.loads(line)) for line in path.read_text().splitlines()]
    sentences = [sentences[i] for i in seeded_subset(len(sentences), limit, seed)]
    return sentences


def encode_sentences(tokenizer, sentences: list[FrameSentence]) -> list[Example]:
    """Model inputs and piece offsets of each sentence (one segment)."""
    encoded = tokenizer([s.text for s in sentences], return_offsets_mapping=True)
    examples = []
    for i, sentence in enumerate(sentences):
        ids = encoded["input_ids"][i]
        row = {"input_ids": ids}
        if "token_type_ids" in encoded:
            row["token_type_ids"] = encoded["token_type_ids"][i]
        info = TokenInfo(
            tokens=tokenizer.convert_ids_to_tokens(ids),
            segment_ids=np.zeros(len(ids), dtype=np.int64),
            word_ids=np.asarray([-1 if w is None else w for w in encoded.word_ids(i)]),
            offsets=np.asarray(encoded["offset_mapping"][i], dtype=np.int64).reshape(-1, 2),
            texts=(sentence.text,),
        )
        examples.append(Example(i, row, info))
    return examples


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.framenet
    torch.manual_seed(cfg.seed)
    sentences = load_sentences(stage, settings.num_sentences, cfg.seed)
    model, tokenizer = load_attached_encoder(cfg)
    examples = encode_sentences(tokenizer, sentences)

    per_sentence: dict[int, np.ndarray] = {}  # sentence index -> [L, H]
    maps_of: dict[int, np.ndarray] = {}  # sentence index -> [L, H, n, n]
    lengths = [len(example.row["input_ids"]) for example in examples]
    batches = length_batches(lengths, settings.batch_size)
    for chosen in tqdm(batches, desc="framenet: pre-trained attention", unit="batch"):
        batch = [examples[i] for i in chosen]
        captured = capture_maps(model, [e.row for e in batch], tokenizer.pad_token_id)
        for example, maps in zip(batch, (m.numpy() for m in captured), strict=True):
            sentence, info = sentences[example.example_id], example.tokens
            special = info.word_ids < 0
            fe = piece_indices(info.offsets, special, sentence.core_fes)
            lu = piece_indices(info.offsets, special, [sentence.target])
            per_sentence[example.example_id] = frame_score(maps, fe, lu)
            maps_of[example.example_id] = maps
    mean, count = mean_over_examples(per_sentence[i] for i in sorted(per_sentence))
    heads = head_frame(mean, "score")
    heads["sentences"] = count
    config = {
        "model": cfg.model.name,
        "sentences": count,
        **OmegaConf.to_container(settings, resolve=True),
    }

    top = heads.sort_values("score", ascending=False).head(settings.top_heads)
    rows, cells = [], []
    for rank, (_, head) in enumerate(top.iterrows(), start=1):
        layer, index = int(head["layer"]) - 1, int(head["head"]) - 1
        best = max(per_sentence, key=lambda i: per_sentence[i][layer, index])
        sentence = sentences[best]
        target = sentence.text[sentence.target.start : sentence.target.end]
        fes = [sentence.text[fe.start : fe.end] for fe in sentence.core_fes]
        rows.append(
            {
                "rank": rank,
                "layer": int(head["layer"]),
                "head": int(head["head"]),
                "score": float(head["score"]),
                "example_score": float(per_sentence[best][layer, index]),
                "frame": sentence.frame,
                "lexical_unit": sentence.lu,
                "target": target,
                "core_fes": "; ".join(
                    f"{fe.name}={text}" for fe, text in zip(sentence.core_fes, fes, strict=True)
                ),
                "sentence": sentence.text,
                "note": f"FE {' / '.join(fes)} -> LU {target}",
            }
        )
        one_head = maps_of[best][layer : layer + 1, index : index + 1]  # [1, 1, n, n]
        grid = grid_table(one_head, examples[best].tokens.tokens)
        grid["layer"], grid["head"] = layer + 1, index + 1
        grid.insert(0, "rank", rank)
        cells.append(grid)
    top_table, cell_table = pd.DataFrame(rows), pd.concat(cells, ignore_index=True)

    plots, figures = stage.out("plots", "framenet"), stage.out("figures", "framenet")
    write_table(plots / "heads.csv", heads)
    write_table(plots / "top_heads.csv", top_table)
    write_table(plots / "top_head_maps.csv", cell_table)
    save_figure(
        figures / "fig3_heads.png",
        head_heatmaps(heads, "score", annotate=True, title="FrameNet: max attention core FE -> LU"),
        f"Fig. 3: per head of the pre-trained model, the maximum attention from core "
        f"frame-element pieces to lexical-unit pieces, averaged over {count} FrameNet 1.5 "
        "sentences (<= 12 tokens, one target, core FEs of <= 3 tokens, none within 2 tokens "
        "of the target).",
        config,
    )
    save_figure(
        figures / "fig4_top_heads.png",
        map_panels(cell_table, top_table),
        f"Fig. 4: the {len(top_table)} heads with the highest FrameNet score, each on the "
        "sentence where it scores highest (rows: query pieces, columns: key pieces).",
        config,
    )
    first = rows[0]
    top_metrics = {
        f"top{row['rank']}.{key}": row[key] for row in rows for key in ("layer", "head", "score")
    }
    write_json(
        stage.out("metrics", "framenet.json"),
        {
            "sentences": count,
            "mean_score": float(heads["score"].mean()),
            **top_metrics,
        },
    )
    log.info("framenet: top head L%d-H%d score %.3f", first["layer"], first["head"], first["score"])


if __name__ == "__main__":
    stage_main(run)
