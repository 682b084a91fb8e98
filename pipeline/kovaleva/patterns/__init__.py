"""The attention-pattern taxonomy of Kovaleva et al. (2019), Sec. 4.1 and Figs. 1-2.

Every self-attention map is one of five types: `vertical` (attention to [CLS]/[SEP]),
`diagonal` (attention to the previous or next token), `vertical+diagonal`, `block`
(attention within each sentence of a pair) and `heterogeneous` (everything else).

Modules, one job each: `features` (scalar features of a map), `heuristic` (the documented
rule that labels a map from its features), `labels` (the label files: reading, checking,
merging), `sample` (which maps are annotated), `cnn` (the 8-layer classifier, its input
resizing and training), `annotate` (the local annotation page), `figures` (Figs. 1-2).
"""

CLASSES: tuple[str, ...] = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
