"""The analyses of Clark et al. (2019), "What Does BERT Look At?".

Each module holds one analysis as short functions over stacks of attention maps:
`attend` (where heads attend), `entropy`, `clustering` (Jensen-Shannon head distances),
`words` (word-piece maps to word maps), `ud` (CoNLL-U trees, treebank samples and the
Stanford `prep`/`pobj` arcs rebuilt from UD),
`syntax` (dependency heads), `coref` (GAP examples and coreference heads), `probe` (the
attention-only dependency probe), `vectors` (GloVe), `stream` (attention streamed through
the engine), `figures`.

Each stage calls one entry point, which returns 0-based tables and metrics ready to write:
`heads_report.analyse_heads` (clark_heads), `syntax_report.analyse_syntax` (clark_syntax),
`coref_report.analyse_coref` (clark_coref). The stages number layers and heads from 1 when
they write the tables (pipeline.core.head_names.numbered_from_one); the figures do the same.
"""
