"""The attention-pattern taxonomy of Kovaleva et al. (2019), Sec. 4.1 and Figs. 1-2.

Every self-attention map is one of five types: `vertical` (attention to [CLS]/[SEP]),
`diagonal` (attention to the previous or next token), `vertical+diagonal`, `block`
(attention within each sentence of a pair) and `heterogeneous` (everything else).

Modules, one job each (their settings: the `patterns` group,
pipeline/analyses/patterns_train/settings.py): `features` (scalar features of a map),
`heuristic` (the threshold rule: it picks maps to label and is the baseline, never training
truth), `mapsets` (maps with their word pieces in an `.npz`),
`labels` (the label folder: visual and human labels, their checks and resolution),
`agreement` (raw agreement and Cohen's kappa), `sample` (which maps to label) with `sheets`
(rendering them for labelling by eye), `roles` (token-role channels), `cnn` (the 8-layer
classifier, its input and training), `fit` (grouped cross-validation, the rule baseline, the
final networks), `apply` (every head classified, shares with intervals, seed stability),
`examples` (the maps of Fig. 1), `figures` (Figs. 1-2), `maps` (the attention stores),
`annotate` and `server` (the local annotation page).

Entry points: `sample.next_round` (patterns_sample), `fit.train_classifier`
(patterns_train), `apply.classify_heads` (patterns_apply), `cnn.load_classifier` with
`mapsets.read_map_set` (patterns_classify), `annotate.open_session` with `server.make_server`
(annotate). In memory layers and heads count from 0, as in the attention store; every file
written here counts them from 1 (pipeline/core/head_names.py).
"""

from pipeline.core.schema import PatternClass

CLASSES: tuple[str, ...] = tuple(c.value for c in PatternClass)
# the types Kovaleva et al. say hold a large part of the attention (Sec. 4.1)
FIRST_THREE: tuple[str, ...] = ("vertical", "diagonal", "vertical+diagonal")

# The project's definition of the five types, as an annotator applies them by eye (consistent
# with Kovaleva et al.'s Fig. 1 and the shared labelling guide). The annotation page shows it;
# the README quotes it.
DEFINITIONS: dict[str, str] = {
    "vertical": "one or a few columns stand out: most queries give much of their attention to "
    "the same key or keys; usually [CLS] or [SEP], but a column on punctuation or on any other "
    "token counts too",
    "diagonal": "a thin line on or just beside the main diagonal stands out (each token attends "
    "to itself, the previous or the next token) and no column does",
    "vertical+diagonal": "a clear column and a clear thin diagonal line are both visible, even "
    "if one is weaker than the other",
    "block": "two sentences only: the two squares on the diagonal (each sentence attending to "
    "itself) hold most of the attention and the rectangles between the sentences are nearly "
    "empty; the squares may be filled broadly",
    "heterogeneous": "none of these: scattered cells, diffuse or near-uniform attention, bands "
    "several tokens wide around the diagonal, or lines that link tokens across the sentences",
}
HARD_CASES: tuple[str, ...] = (
    "Label the dominant structure seen at a glance; do not add up small cells.",
    "A faint column over diffuse attention is vertical only if it clearly stands out.",
    "A band several tokens wide is heterogeneous unless a thin line dominates it.",
    "A single sentence is never block; block needs both squares.",
    "Torn between two types: choose the one whose defining structure is easier to see.",
)
