"""The analyses of Clark et al. (2019), "What Does BERT Look At?".

Each module holds one analysis as short functions over stacks of attention maps:
`attend` (where heads attend), `entropy`, `clustering` (Jensen-Shannon head distances),
`words` (word-piece maps to word maps), `ud` (CoNLL-U trees), `syntax` (dependency heads),
`coref` (GAP coreference heads), `probe` (the attention-only dependency probe),
`stream` (word-level attention streamed through the engine), `figures`.
"""
