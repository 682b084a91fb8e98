"""The attention-pattern taxonomy of Kovaleva et al. (2019), Sec. 4.1 and Figs. 1-2.

Every self-attention map is one of five types: `vertical` (attention to [CLS]/[SEP]),
`diagonal` (attention to the previous or next token), `vertical+diagonal`, `block`
(attention within each sentence of a pair) and `heterogeneous` (everything else).

Modules, one job each: `settings` (the `patterns` config group, typed), `features` (scalar
features of a map), `heuristic` (the documented rule that labels a map from its features),
`labels` (the label files: reading, writing, checking, merging), `maps` (reading maps of given
ids, labelling them by the rule), `sample` (which maps are annotated), `cnn` (the 8-layer
classifier, its input resizing and training), `fit` (the classifier fitted on the labelled
maps and scored), `apply` (every head classified, class shares), `examples` (the maps of
Fig. 1), `figures` (Figs. 1-2), `annotate` and `server` (the local annotation page).

Entry points of the stages: `sample.sample_labels` (patterns_sample), `fit.train_classifier`
(patterns_train), `apply.classify_heads` (patterns_apply), `annotate.open_session` with
`server.make_server` (annotate). In memory layers and heads count from 0, as in the attention
store; every file written here counts them from 1 (pipeline/core/heads.py).
"""

CLASSES: tuple[str, ...] = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
