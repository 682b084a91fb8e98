"""Clark et al. (2019) analyses on hand-built maps and trees with known answers."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.attention.engine import attach
from pipeline.attention.store import AttentionStore, TokenInfo, store_path
from pipeline.attention.store_writer import write_attention
from pipeline.claims.clark import NOT_SPECIALISED, TABLE1
from pipeline.clark import figures
from pipeline.clark.attend import TargetAttention, target_masks
from pipeline.clark.clustering import behaviours, embed, js_divergence_sum
from pipeline.clark.coref import analyse_coref
from pipeline.clark.entropy import HeadEntropy, row_entropy
from pipeline.clark.gap import (
    EncodedGap,
    Span,
    encode_gap,
    head_correct,
    name_scores,
    nearest_candidate,
    read_gap,
    read_gap_sample,
)
from pipeline.clark.heads import analyse_heads, headline
from pipeline.clark.probe import probe_example, probe_uas, train_probe
from pipeline.clark.relations import (
    ALL,
    ArcOutcomes,
    offset_heads,
    predict_heads,
    select_and_report,
)
from pipeline.clark.stream import encode_words
from pipeline.clark.syntax import analyse_syntax
from pipeline.clark.ud import (
    Arc,
    Sentence,
    read_conllu,
    read_treebank_sample,
    rebuilt_prepositions,
)
from pipeline.clark.vectors import WordVectors
from pipeline.clark.words import piece_groups, word_maps
from pipeline.core.errors import PipelineError
from pipeline.core.head_names import head_name
from pipeline.core.schema import (
    ClarkCorefConfig,
    ClarkSyntaxConfig,
)
from pipeline.data.sampling import seeded_subset
from pipeline.models.loading import load_encoder
from tests.support.builders import drawn, group_settings
from tests.support.paths import REPO

# ---------------------------------------------------------------- word pieces -> words


def test_piece_groups_number_words_and_specials_in_order():
    assert piece_groups([None, 0, 0, 1, None]).tolist() == [0, 1, 1, 2, 3]
    assert piece_groups([-1, 0, 1, 1, 1, -1, 2, -1]).tolist() == [0, 1, 2, 2, 2, 3, 4, 5]


def test_word_maps_sum_to_words_and_average_from_words():
    groups = np.array([0, 1, 1, 2])  # [CLS] w1 w1 [SEP]
    maps = torch.tensor(
        [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.2, 0.6, 0.2],  # first piece of w1: 0.8 to w1
            [0.5, 0.0, 0.0, 0.5],  # second piece of w1: nothing to w1
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    words = word_maps(maps, groups)
    expected = torch.tensor(
        [
            [1.0, 0.0, 0.0],
            [0.25, 0.4, 0.35],  # mean of rows (0, 0.8, 0.2) and (0.5, 0, 0.5)
            [0.25, 0.5, 0.25],
        ]
    )
    torch.testing.assert_close(words, expected)


def test_word_maps_on_real_tokenizer_output(tokenizer):
    words = ["The", "unaffable", "Wittgenstein", "spoke", "."]
    encoding, groups = encode_words(tokenizer, words, max_length=64)
    pieces = tokenizer.convert_ids_to_tokens(encoding["input_ids"])
    assert len(pieces) > len(words) + 2  # some words really are split
    assert groups.max() + 1 == len(words) + 2  # [CLS], the five words, [SEP]
    for k, word in enumerate(words, start=1):  # the pieces of word k spell it
        spelled = "".join(
            p.removeprefix("##") for p, g in zip(pieces, groups, strict=True) if g == k
        )
        assert spelled == word.lower()
    n = len(pieces)
    identity = torch.eye(n)[None, None]  # [1, 1, n, n]: every piece attends to itself
    result = word_maps(identity, groups)[0, 0]  # [7, 7]
    torch.testing.assert_close(result, torch.eye(len(words) + 2))  # a word attends to itself
    uniform = word_maps(torch.full((n, n), 1.0 / n), groups)  # to a word: its share of pieces
    sizes = torch.bincount(torch.as_tensor(groups)).float()
    torch.testing.assert_close(uniform, (sizes / n).expand(len(sizes), -1))


def test_encode_words_keeps_a_place_for_words_without_pieces(tokenizer):
    _, groups = encode_words(tokenizer, ["a", "\u200b", "b"], max_length=16)
    assert groups.max() + 1 == 5  # the zero-width space became [UNK]
    assert encode_words(tokenizer, ["word"] * 40, max_length=16) is None


# ------------------------------------------------------------------------ CoNLL-U

CONLLU = """# sent_id = s1
# text = Today's dog barks.
1-2\tToday's\t_\t_\t_\t_\t_\t_\t_\t_
1\tToday\ttoday\tNOUN\tNN\t_\t3\tnmod:poss\t_\t_
2\t's\t's\tPART\tPOS\t_\t1\tcase\t_\t_
3\tdog\tdog\tNOUN\tNN\t_\t4\tnsubj\t_\t_
3.1\tghost\tghost\tNOUN\tNN\t_\t_\t_\t_\t_
4\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = s2
1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_
"""


def test_read_conllu_skips_multiword_tokens_and_empty_nodes(tmp_path):
    path = tmp_path / "x-ud-dev.conllu"
    path.write_text(CONLLU)
    first, second = read_conllu(path)
    assert first.words == ("Today", "'s", "dog", "barks", ".")
    assert first.heads == (3, 1, 4, 0, 4)
    assert first.relations == ("nmod:poss", "case", "nsubj", "root", "punct")  # subtypes kept
    assert second.sent_id == "s2" and len(second) == 1


def test_read_treebank_sample_reads_the_splits_file_and_draws_a_seeded_sample(tmp_path):
    (tmp_path / "x-ud-dev.conllu").write_text(CONLLU)
    (tmp_path / "x-ud-train.conllu").write_text(CONLLU.split("\n\n")[1])
    every = read_treebank_sample(tmp_path, "dev", None, seed=0)
    assert [s.sent_id for s in every] == ["s1", "s2"]
    assert read_treebank_sample(tmp_path, "dev", 5, seed=0) == every  # more than there are
    (drawn,) = read_treebank_sample(tmp_path, "dev", 1, seed=3)
    assert drawn == every[int(seeded_subset(2, 1, 3)[0])]
    assert [s.sent_id for s in read_treebank_sample(tmp_path, "train", None, seed=0)] == ["s2"]
    with pytest.raises(PipelineError, match=r"expected one \*-ud-test.conllu .* found 0"):
        read_treebank_sample(tmp_path, "test", None, seed=0)
    (tmp_path / "y-ud-dev.conllu").write_text(CONLLU)
    with pytest.raises(PipelineError, match="found 2"):
        read_treebank_sample(tmp_path, "dev", None, seed=0)


def test_read_conllu_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(PipelineError, match="not found"):
        read_conllu(tmp_path / "missing.conllu")
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tonly\tthree\n")
    with pytest.raises(PipelineError, match=r"bad.conllu:1"):
        read_conllu(bad)


# ---------------------------------------------------------------- syntax heads

# "the dog barks loudly": the -> dog, dog -> barks, barks = root, loudly -> barks
TREE = Sentence(
    sent_id="t",
    words=("the", "dog", "barks", "loudly"),
    heads=(2, 3, 0, 3),
    relations=("det", "nsubj", "root", "advmod"),
    upos=("DET", "NOUN", "VERB", "ADV"),
)


def dependent_to_head_map(sentence: Sentence) -> torch.Tensor:
    """A word map [w + 2, w + 2] in which every dependent attends only to its head."""
    g = len(sentence) + 2
    maps = torch.zeros(g, g)
    maps[0, 0] = maps[-1, -1] = 1.0
    for j, head in enumerate(sentence.heads, start=1):
        maps[j, head] = 1.0  # the root word attends to [CLS] (position 0)
    return maps


def tree_maps() -> torch.Tensor:
    """[L=1, H=3]: head 0 dep->head, head 1 its transpose (head->dep), head 2 attends to [SEP]."""
    forward = dependent_to_head_map(TREE)
    to_sep = torch.zeros_like(forward)
    to_sep[:, -1] = 1.0
    return torch.stack([forward, forward.T.contiguous(), to_sep])[None]


def test_predict_heads_reads_rows_and_columns():
    predicted = predict_heads(tree_maps())  # [2, 1, 3, 4]
    assert predicted[0, 0, 0].tolist()[:2] == [2, 3]  # dep->head of head 0: the/dog
    assert predicted[1, 0, 1].tolist()[:2] == [2, 3]  # head->dep of the transposed head
    assert predicted[1, 0, 1, 3] == 3  # loudly is attended to by barks


def test_offset_heads_mark_out_of_range_as_zero():
    assert offset_heads(3, [-1, 2]).tolist() == [[0, 1, 2], [3, 0, 0]]


def test_head_counts_and_selection_find_the_right_head_and_offset():
    relations = ["advmod", "det", "nsubj"]
    select = ArcOutcomes(relations, [-1, 1], num_layers=1, num_heads=3)
    report = ArcOutcomes(relations, [-1, 1], num_layers=1, num_heads=3)
    for counts in (select, report):
        counts.add(TREE, tree_maps())
    assert select.total.tolist() == [1, 1, 1]  # root left out
    table = select_and_report(select, report, min_count=1).set_index("relation")
    assert table.loc["det", "direction"] == "dep->head" and table.loc["det", "head"] == 0
    assert table.loc["det", "head_accuracy"] == 1.0
    assert table.loc["det", "offset"] == 1 and table.loc["det", "offset_accuracy"] == 1.0
    assert table.loc["advmod", "offset"] == -1  # loudly's head is one word to the left
    assert table.loc[ALL, "head_accuracy"] == 1.0 and table.loc[ALL, "count"] == 3
    assert table.loc[ALL, "offset_accuracy"] == pytest.approx(2 / 3)
    assert table.index[-1] == ALL


# "he sat in the house of John": UD attaches house to sat (obl), in to house (case), John to
# house (nmod), of to John (case); Stanford: in -> sat (prep), house -> in (pobj), of -> house
# (prep), John -> of (pobj). "his" (nmod:poss) has no preposition to rebuild.
PREPOSITIONS = Sentence(
    sent_id="p",
    words=("he", "sat", "in", "his", "house", "of", "John"),
    heads=(2, 0, 5, 5, 2, 7, 5),
    relations=("nsubj", "root", "case", "nmod:poss", "obl", "case", "nmod"),
    upos=("PRON", "VERB", "ADP", "PRON", "NOUN", "ADP", "PROPN"),
)


def test_prep_and_pobj_are_rebuilt_from_case():
    assert rebuilt_prepositions(PREPOSITIONS) == [
        Arc(2, 2, "prep"), Arc(4, 3, "pobj"),  # in -> sat, house -> in
        Arc(5, 5, "prep"), Arc(6, 6, "pobj"),  # of -> house, John -> of
    ]  # fmt: skip
    assert len(PREPOSITIONS.arcs) == 6 + 4  # six non-root UD arcs, then the rebuilt four


def test_possessive_case_and_stacked_prepositions_are_not_rebuilt():
    possessive = Sentence(
        "s", ("John", "'s", "dog"), (3, 1, 0), ("nmod:poss", "case", "root"), ("X",) * 3
    )
    assert rebuilt_prepositions(possessive) == []
    stacked = Sentence(  # "out from under it": two case words on one noun
        "s", ("came", "from", "under", "it"), (0, 4, 4, 1), ("root", "case", "case", "obl"),
        ("X",) * 4,
    )  # fmt: skip
    assert rebuilt_prepositions(stacked) == []


def test_rebuilt_arcs_are_scored_but_not_counted_again_in_all_relations():
    """Head 0: every word attends to its UD head. Head 1: "in", "house", "of", "John"
    attend to their Stanford heads (sat, in, house, of), the rest to their UD heads. All
    relations counts the six UD arcs only: head 1 finds 2 of them (he, his)."""
    g = len(PREPOSITIONS) + 2
    maps = torch.zeros(2, g, g)  # [H, w + 2, w + 2]
    stanford = {3: 2, 5: 3, 6: 5, 7: 6}  # 1-based word -> its Stanford head
    for j, head in enumerate(PREPOSITIONS.heads, start=1):
        maps[0, j, head] = 1.0
        maps[1, j, stanford.get(j, head)] = 1.0
    relations = sorted({arc.relation for arc in PREPOSITIONS.arcs})
    outcomes = ArcOutcomes(relations, [-1, 1], num_layers=1, num_heads=2)
    outcomes.add(PREPOSITIONS, maps[None])
    heads, _ = outcomes.accuracy()  # [R + 1, 2, 1, 2]
    ud, rebuilt = (
        dict(zip([*relations, ALL], heads[:, 0, 0, h].tolist(), strict=True)) for h in (0, 1)
    )
    assert ud["case"] == 1.0 and ud["prep"] == 0.0 and ud["pobj"] == 0.0 and ud[ALL] == 1.0
    assert rebuilt["prep"] == 1.0 and rebuilt["pobj"] == 1.0 and rebuilt["case"] == 0.0
    assert rebuilt[ALL] == pytest.approx(2 / 6)
    table = select_and_report(outcomes, outcomes, min_count=1).set_index("relation")
    assert table.loc[ALL, "count"] == 6 and table.loc["prep", "count"] == 2


def test_the_documented_table1_mapping_is_the_one_the_claims_use():
    """docs/stages/clark.md's table: Stanford relation -> the first UD relation named (or
    `rebuilt`), against pipeline/claims/clark.py."""
    text = (REPO / "docs/stages/clark.md").read_text()
    rows = re.findall(r"^  \| (\w+) \| (rebuilt|`[a-z:]+`)", text, flags=re.M)
    documented = {name: ud.strip("`") for name, ud in rows if name != "All"}
    coded = {name: row.scored for name, row in {**TABLE1, **NOT_SPECIALISED}.items()}
    coded = {name: "rebuilt" if name in ("prep", "pobj") else ud for name, ud in coded.items()}
    assert documented == coded


# ---------------------------------------------------------------- probe


def random_tree(rng: np.random.Generator, length: int) -> Sentence:
    heads = [0] + [int(rng.integers(1, j + 1)) for j in range(1, length)]  # heads to the left
    return Sentence("r", ("w",) * length, tuple(heads), ("dep",) * length, ("X",) * length)


def test_probe_learns_the_head_that_encodes_the_tree():
    rng = np.random.default_rng(0)
    examples = []
    for _ in range(40):
        sentence = random_tree(rng, int(rng.integers(3, 9)))
        noise = torch.softmax(torch.randn(3, len(sentence) + 2, len(sentence) + 2) * 3, -1)
        signal = dependent_to_head_map(sentence)
        maps = torch.cat([noise, signal[None]])[None]  # [1, 4, w + 2, w + 2]; head 3 is syntax
        examples.append(probe_example(sentence, maps))
    probe = train_probe(examples[:30], epochs=30, batch_size=8, learning_rate=0.1, seed=0)
    assert probe_uas(probe, examples[30:], batch_size=8) == 1.0
    assert int(probe.u.argmax()) == 3  # the dependent->head direction of head 3 carries it


def left_or_right_example(rng: np.random.Generator) -> tuple[Sentence, torch.Tensor, np.ndarray]:
    """Words of type "x" take the previous word as head, "y" the next; ROOT past the ends.

    Head 0 attends to the previous word, head 1 to the next: the attention says where each
    candidate is, and only the word's type says which of the two is its head.
    """
    length = int(rng.integers(3, 9))
    kinds = rng.choice(["x", "y"], size=length)
    heads = [j - 1 if kind == "x" else (j + 1) % (length + 1) for j, kind in enumerate(kinds, 1)]
    sentence = Sentence("lr", tuple(kinds), tuple(heads), ("dep",) * length, ("X",) * length)
    g = length + 2
    previous, following = torch.zeros(g, g), torch.zeros(g, g)
    for j in range(1, length + 1):
        previous[j, j - 1] = 1.0
        following[j, (j + 1) % (length + 1)] = 1.0  # the last word's "next" is ROOT
    vectors = np.array([[1.0, 0.0] if kind == "x" else [0.0, 1.0] for kind in kinds], np.float32)
    return sentence, torch.stack([previous, following])[None], vectors


def test_words_probe_uses_the_word_to_choose_between_heads():
    rng = np.random.default_rng(1)
    data = [left_or_right_example(rng) for _ in range(40)]
    plain = [probe_example(s, m) for s, m, _ in data]
    words = [probe_example(s, m, v) for s, m, v in data]
    settings = {"epochs": 40, "batch_size": 8, "learning_rate": 0.1, "seed": 0}
    plain_uas = probe_uas(train_probe(plain[:30], **settings), plain[30:], batch_size=8)
    words_uas = probe_uas(train_probe(words[:30], **settings), words[30:], batch_size=8)
    assert words_uas == 1.0
    assert plain_uas < 0.8  # attention alone cannot tell x from y


def test_word_vectors_from_a_glove_text_file(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("the 0.1 0.2\ndog 1 2\ncat 3 4\n")
    vectors = WordVectors(str(path), ["The", "dog", "unicorn"])
    assert vectors.coverage == pytest.approx(2 / 3)
    np.testing.assert_allclose(vectors(["DOG", "the", "unicorn"]), [[1, 2], [0.1, 0.2], [0, 0]])
    with pytest.raises(PipelineError, match="word vectors not found"):
        WordVectors(str(tmp_path / "missing.txt"), ["a"])


def test_probe_uas_leaves_punctuation_out():
    sentence = Sentence(
        "p", ("a", "b", "."), (0, 1, 1), ("root", "dep", "punct"), ("X", "X", "PUNCT")
    )
    example = probe_example(sentence, dependent_to_head_map(sentence)[None, None])
    assert example.scored.tolist() == [True, True, False]
    assert example.features.shape == (1, 4, 4)  # ROOT + 3 words; [SEP] dropped


# ---------------------------------------------------------------- coreference

GAP_TSV = (
    "ID\tText\tPronoun\tPronoun-offset\tA\tA-offset\tA-coref\tB\tB-offset\tB-coref\tURL\n"
    "d-1\tAnna met Bob. She smiled.\tShe\t14\tAnna\t0\tTRUE\tBob\t9\tFALSE\tu\n"
    "d-2\tAnna met Bob. He smiled.\tHe\t14\tAnna\t0\tFALSE\tBob\t9\tTRUE\tu\n"
    "d-3\tAnna met Bob and Carl. He left.\tHe\t23\tAnna\t0\tFALSE\tBob\t9\tFALSE\tu\n"
)


def test_read_gap_skips_neither_and_nearest_baseline(tmp_path):
    path = tmp_path / "gap-development.tsv"
    path.write_text(GAP_TSV)
    examples = read_gap(path)
    assert [e.answer for e in examples] == [0, 1]
    assert examples[0].pronoun == Span(14, 17) and examples[0].names[1] == Span(9, 12)
    assert [nearest_candidate(e) for e in examples] == [1, 1]  # Bob is nearer both times
    with pytest.raises(PipelineError, match="GAP file not found"):
        read_gap(tmp_path / "missing.tsv")


def test_read_gap_sample_reads_the_splits_file_and_draws_a_seeded_sample(tmp_path):
    (tmp_path / "gap-validation.tsv").write_text(GAP_TSV)
    every = read_gap_sample(tmp_path, "validation", None, seed=0)
    assert [e.answer for e in every] == [0, 1]  # d-3 (neither name) left out
    (drawn,) = read_gap_sample(tmp_path, "validation", 1, seed=5)
    assert drawn == every[int(seeded_subset(2, 1, 5)[0])]
    with pytest.raises(PipelineError, match=r"gap-development\.tsv"):
        read_gap_sample(tmp_path, "development", None, seed=0)


def test_name_scores_use_the_most_attended_word_of_each_name(tokenizer, tmp_path):
    path = tmp_path / "gap-development.tsv"
    path.write_text(GAP_TSV)
    example = read_gap(path)[0]  # [CLS] anna met bob . she smiled . [SEP]
    item = encode_gap(tokenizer, example, max_length=32)
    assert item.pronoun.tolist() == [5]
    assert [w.tolist() for w in item.names] == [[1], [3]]
    n = len(item.encoding["input_ids"])
    maps = torch.zeros(1, 2, n, n)
    maps[0, 0, 5, 1] = 0.7  # head 0: she -> anna (right)
    maps[0, 0, 5, 3] = 0.3
    maps[0, 1, 5, 3] = 0.9  # head 1: she -> bob (wrong)
    scores = name_scores(maps, item)  # [2, 1, 2]
    torch.testing.assert_close(scores[:, 0, 0], torch.tensor([0.7, 0.3]))
    correct = head_correct([scores, scores.flip(0)], [0, 1])  # [2 examples, 1, 2]
    assert correct.tolist() == [[[True, False]], [[True, False]]]


def test_name_scores_take_the_max_over_a_names_words():
    item = EncodedGap(  # [CLS] x y ##y z she [SEP]: A = "x y", B = "z"
        encoding={"input_ids": [0] * 7},
        pronoun=np.array([5]),
        names=(np.array([1, 2]), np.array([3])),  # word indices (groups)
        groups=np.array([0, 1, 2, 2, 3, 4, 5]),
    )
    maps = torch.zeros(1, 1, 7, 7)
    maps[0, 0, 5] = torch.tensor([0.0, 0.1, 0.2, 0.2, 0.5, 0.0, 0.0])  # "y" gets 0.2 + 0.2
    scores = name_scores(maps, item)[:, 0, 0]
    torch.testing.assert_close(scores, torch.tensor([0.4, 0.5]))


# ---------------------------------------------------------------- where heads attend

TOKENS = ["[CLS]", "a", ".", "[SEP]", "b", "[SEP]"]
WORD_IDS = [-1, 0, 1, -1, 2, -1]


def test_target_masks_and_averages():
    masks = target_masks(TOKENS, WORD_IDS, [".", ","])
    assert masks["sep->sep"][1] == 2 and masks["other->sep"][1] == 4
    n = len(TOKENS)
    to_cls = np.zeros((n, n))
    to_cls[:, 0] = 1.0
    to_next = np.eye(n, k=1)
    to_next[-1, -1] = 1.0  # the last token has no next one
    sep_rows = np.eye(n)  # self, except the [SEP]s attend to the other [SEP]
    sep_rows[3], sep_rows[5] = np.eye(n)[5], np.eye(n)[3]
    maps = np.stack([to_cls, to_next, sep_rows])[None]  # [1, 3, n, n]
    targets = TargetAttention(1, 3, [".", ","])
    targets.add(maps, TOKENS, WORD_IDS)
    table = targets.table().pivot_table(index="head", columns="target", values="attention")
    assert table.loc[0, "cls"] == 1.0 and table.loc[0, "sep"] == 0.0
    assert table.loc[1, "next"] == pytest.approx(5 / 6)
    assert table.loc[1, "punct"] == pytest.approx(1 / 6)  # "a" attends to "."
    assert table.loc[2, "self"] == pytest.approx(4 / 6)
    assert table.loc[2, "sep->sep"] == 1.0 and table.loc[2, "other->sep"] == 0.0
    assert table.loc[1, "other->sep"] == pytest.approx(2 / 4)  # "." -> [SEP], "b" -> [SEP]


# ---------------------------------------------------------------- entropy


def test_entropy_of_uniform_and_one_hot_heads():
    n = 8
    maps = np.stack([np.full((n, n), 1.0 / n), np.eye(n)])[None]  # [1, 2, n, n]
    rows = row_entropy(maps)
    assert rows[0, 0] == pytest.approx(np.full(n, math.log(n)))
    assert rows[0, 1].max() < 0.01  # smoothing keeps one-hot rows near 0 nats
    entropy = HeadEntropy(1, 2)
    entropy.add(maps)
    entropy.add(maps[..., :4, :4] * 2)  # a second example of length 4 (rows re-normalised)
    table = entropy.table()
    assert table["uniform"].iloc[0] == pytest.approx((math.log(8) + math.log(4)) / 2)
    assert table.loc[0, "cls_entropy"] == pytest.approx(table["uniform"].iloc[0], rel=1e-6)


# ---------------------------------------------------------------- clustering


def test_js_distance_of_identical_and_disjoint_heads():
    n = 5
    shifted = np.roll(np.eye(n), 1, axis=1)
    maps = np.stack([np.eye(n), np.eye(n), shifted])  # [3, n, n]
    distances = js_divergence_sum(maps)
    assert distances[0, 1] == pytest.approx(0.0, abs=1e-5)
    assert distances[0, 2] == pytest.approx(n * math.log(2), rel=1e-2)  # disjoint rows
    np.testing.assert_allclose(distances, distances.T)


def test_mds_reproduces_an_embeddable_distance_matrix():
    points = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [3.0, 4.0]])
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
    embedded = embed(distances, seed=0)
    again = np.linalg.norm(embedded[:, None] - embedded[None], axis=-1)
    np.testing.assert_allclose(again, distances, atol=1e-2)


def test_behaviours_label_focused_broad_and_other_heads():
    rows = []
    attention = {0: {"previous": 0.9}, 1: {"cls": 0.6, "sep": 0.2}, 2: {}, 3: {}}
    for head, values in attention.items():
        for target in ("previous", "next", "cls", "sep", "punct"):
            rows.append(
                {"layer": 0, "head": head, "target": target, "attention": values.get(target, 0.05)}
            )
    entropy = pd.DataFrame(
        {"layer": 0, "head": [0, 1, 2, 3], "entropy": [0.1, 1.0, 2.9, 1.0], "uniform": 3.0}
    )
    labels = behaviours(pd.DataFrame(rows), entropy, focus=0.5, broad=0.8)
    assert labels["behaviour"].tolist() == ["previous", "cls", "broad", "other"]


# ---------------------------------------------------------------- figures


def test_head_clusters_colours_layers_numbered_from_one():
    table = pd.DataFrame(
        {"layer": [0, 0, 1], "head": [0, 1, 0], "behaviour": "cls", "x": [0.0, 1, 2], "y": 0.0}
    )
    figure = figures.head_clusters(table)
    by_layer, by_behaviour = figure.axes
    legend = by_layer.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["L1", "L2"]
    assert legend.get_title().get_text() == "layer"
    key = {
        t.get_text(): h.get_markerfacecolor()
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    drawn = by_layer.collections[0].get_facecolors()[:, :3]  # one row per head, table order
    np.testing.assert_allclose(drawn, [key["L1"], key["L1"], key["L2"]])
    assert [t.get_text() for t in by_behaviour.get_legend().get_texts()] == ["cls"]


# ---------------------------------------------------------------- entry points and stages


def write_hand_built_store(path, model_id: str) -> None:
    """Three examples (TOKENS) of 2 layers x 2 heads. Layer 1: head 0 attends to [CLS], head 1
    to the previous token ([CLS] to itself); layer 2: both heads attend to [CLS]."""
    n = len(TOKENS)
    info = TokenInfo(
        TOKENS, np.array([0, 0, 0, 0, 1, 1]), np.array(WORD_IDS), np.zeros((n, 2), int), ("a.", "b")
    )
    to_cls = np.zeros((n, n), dtype=np.float32)
    to_cls[:, 0] = 1.0
    previous = np.eye(n, k=-1, dtype=np.float32)
    previous[0, 0] = 1.0
    maps = np.stack([np.stack([to_cls, previous]), np.stack([to_cls, to_cls])])  # [2, 2, n, n]
    write_attention(
        path,
        [("pretrained", "rte", i, maps, info) for i in range(3)],
        model_id=model_id,
        num_layers=2,
        num_heads=2,
        config_hash="test",
    )


def test_analyse_heads_returns_0_based_tables_and_1_based_metrics(tmp_path):
    write_hand_built_store(tmp_path / "rte.parquet", "m")
    settings = group_settings(
        "clark_heads", {"variant": "pretrained", "num_examples": 2, "bootstrap_resamples": 1000}
    )
    report = analyse_heads(AttentionStore(tmp_path / "rte.parquet"), "rte", 0, settings)
    assert report.examples == 2 and report.metrics["examples"] == 2
    for table in (report.targets, report.entropy, report.clusters):
        assert sorted(set(table["layer"])) == [0, 1] and sorted(set(table["head"])) == [0, 1]
    assert report.distances["head"].tolist() == ["L1-H1", "L1-H2", "L2-H1", "L2-H2"]
    assert report.distances.columns.tolist() == ["head", "L1-H1", "L1-H2", "L2-H1", "L2-H2"]
    distances = report.distances.set_index("head")
    assert distances.loc["L1-H1", "L2-H1"] == pytest.approx(0.0, abs=1e-4)  # both to [CLS]
    assert distances.loc["L1-H1", "L1-H2"] > 1.0
    layer_two_cls = report.targets.query("layer == 1 and target == 'cls'")["attention"]
    assert layer_two_cls.tolist() == pytest.approx([1.0, 1.0])
    margin = {k: v for k, v in report.metrics.items() if k.startswith("same_layer_margin")}
    assert report.metrics == headline(report.targets, report.entropy) | {"examples": 2} | margin
    # same-layer pairs: L1-H1/L1-H2 apart, L2-H1/L2-H2 alike; across layers, half the pairs
    # are apart (L1-H2 with both of layer 2): both means are half the gap, the margin 0
    assert margin["same_layer_margin"] == pytest.approx(0.0, abs=1e-4)


def test_headline_numbers_the_peak_layer_from_one():
    targets = pd.DataFrame(
        {
            "layer": [0, 1, 2] * 5,
            "head": 0,
            "target": np.repeat(["cls", "sep", "punct", "previous", "next"], 3),
            "attention": [0.1, 0.2, 0.9, 0.5, 0.1, 0.1, 0.0, 0.3, 0.0, 0.6, 0.0, 0.0, 0, 0, 0.1],
        }
    )
    entropy = pd.DataFrame(
        {"layer": [0, 1, 2], "head": 0, "entropy": [1.0, 2.0, 3.0], "cls_entropy": [0, 0, 2.5]}
    ).assign(uniform=4.0)
    metrics = headline(targets, entropy)
    peaks = {t: metrics[f"{t}_peak_layer"] for t in ("cls", "sep", "punct", "previous", "next")}
    assert peaks == {"cls": 3, "sep": 1, "punct": 2, "previous": 1, "next": 3}
    assert metrics["cls_peak_layer_attention"] == 0.9
    assert metrics["cls_entropy_last_layer"] == 2.5 and metrics["entropy_mean"] == 2.0


def test_clark_heads_stage_on_a_hand_built_store(micro_stage):
    from stages import clark_heads

    stage = micro_stage("rte")
    write_hand_built_store(
        store_path(stage.upstream("attention"), "rte", stage.seed), stage.cfg.model.name
    )
    clark_heads.run(stage)
    seed = stage.seed_folder
    metrics = json.loads(stage.out("metrics", "clark_heads", "rte", f"{seed}.json").read_text())
    assert not [key for key in metrics if key.endswith("seconds")]
    # layer 1: head 1 gives [CLS] only its rows 0 ([CLS] itself) and 1 (previous); layer 2: all
    assert metrics["cls_peak_layer"] == 2 and metrics["cls_peak_layer_attention"] == 1.0
    assert metrics["previous_peak_layer"] == 1
    assert metrics["previous_peak_layer_attention"] == pytest.approx((1 / 6 + 5 / 6) / 2)
    assert metrics["examples"] == 3
    plots = stage.out("plots", "clark_heads", "rte", seed)
    clusters = pd.read_csv(plots / "clusters.csv")
    assert clusters.set_index(["layer", "head"])["behaviour"].to_dict() == {
        (1, 1): "cls",
        (1, 2): "previous",
        (2, 1): "cls",
        (2, 2): "cls",
    }
    for name in ("targets", "entropy"):
        table = pd.read_csv(plots / f"{name}.csv")
        assert sorted(set(table["layer"])) == [1, 2] and sorted(set(table["head"])) == [1, 2]
    assert pd.read_csv(plots / "distances.csv")["head"].iloc[-1] == "L2-H2"
    for name in ("targets", "entropy", "clusters"):
        figure = stage.out("figures", "clark_heads", "rte", seed, f"{name}.png")
        assert "(rte, pretrained tiny_random, 3 dev examples)" in drawn(figure)
        assert json.loads(figure.with_suffix(".json").read_text())["config"]["examples"] == 3


@pytest.fixture(scope="module")
def tiny_encoder(tiny_model_cfg, tokenizer):
    """The tiny random BERT (2 layers x 4 heads), attached to the engine."""
    return attach(load_encoder(tiny_model_cfg, tokenizer, seed=0).eval())


def test_analyse_coref_chooses_on_one_split_and_reports_on_the_other(
    tmp_path, tiny_encoder, tokenizer
):
    (tmp_path / "gap-development.tsv").write_text(GAP_TSV)
    examples = read_gap_sample(tmp_path, "development", None, seed=0)
    report = analyse_coref(tiny_encoder, tokenizer, examples, examples, coref(32), seed=0)
    assert len(report.heads) == 8
    assert sorted(set(report.heads["layer"])) == [0, 1]  # 0-based until written
    assert sorted(set(report.heads["head"])) == [0, 1, 2, 3]
    best = report.heads.loc[report.heads["select_accuracy"].idxmax()]
    assert report.metrics["best_head"] == head_name(best["layer"], best["head"])
    assert report.metrics["head_accuracy"] == best["report_accuracy"]
    assert report.heads["report_accuracy"].isin([0.0, 0.5, 1.0]).all()  # two report examples
    # Bob is nearer: wrong for "She" (Anna), right for "He" (Bob)
    assert report.comparison["nearest name"].estimate == 0.5
    assert report.metrics["nearest_baseline_accuracy"] == 0.5
    assert (report.select_examples, report.report_examples) == (2, 2)
    with pytest.raises(PipelineError, match="only 1 GAP report example fits in 32 pieces"):
        analyse_coref(tiny_encoder, tokenizer, examples, examples[:1], coref(32), seed=0)
    with pytest.raises(PipelineError, match="none of the 2 GAP select examples fits in 6"):
        analyse_coref(tiny_encoder, tokenizer, examples, examples, coref(6), seed=0)


def coref(max_length: int) -> ClarkCorefConfig:
    return group_settings(
        "clark_coref", {"max_length": max_length, "batch_size": 2, "bootstrap_resamples": 1000}
    )


def tiny_syntax_settings(word_vectors=None, resamples=1000) -> ClarkSyntaxConfig:
    return group_settings(
        "clark_syntax",
        {
            "ud.batch_size": 4, "ud.max_length": 32, "ud.max_offset": 2, "ud.min_count": 1,
            "probe.epochs": 2, "probe.batch_size": 4, "probe.learning_rate": 0.05,
            "probe.word_vectors": word_vectors, "bootstrap_resamples": resamples,
        },
    )  # fmt: skip


def is_share_of(value: float, count: int) -> bool:
    """True if `value` is k / `count` for a whole k from 0 to `count` (to written precision)."""
    hits = value * count
    return 0 <= round(hits) <= count and abs(hits - round(hits)) < 1e-4


def test_analyse_syntax_on_tiny_trees(tmp_path, tiny_encoder, tokenizer):
    rng = np.random.default_rng(0)
    words = ("the", "dog", "barks", "cat", "sees")
    trees = []
    for _ in range(12):
        tree = random_tree(rng, int(rng.integers(3, 7)))
        chosen = tuple(words[int(k)] for k in rng.integers(0, len(words), len(tree)))
        trees.append(Sentence("r", chosen, tree.heads, tree.relations, tree.upos))
    dev = [TREE, *trees[8:]]
    report = analyse_syntax(
        tiny_encoder, tokenizer, trees[:8], dev, tiny_syntax_settings(None, 200), 0
    )
    # det, nsubj and advmod have no train arcs, so no row of their own; ALL counts them
    assert report.relations["relation"].tolist() == ["dep", ALL]
    assert report.relations["count"].iloc[-1] == sum(len(t) - 1 for t in [TREE, *trees[8:]])
    assert report.relations["layer"].isin([0, 1]).all()  # 0-based until written
    assert report.relations["offset"].isin([-2, -1, 1, 2]).all()
    overall = report.relations.iloc[-1]
    assert report.metrics["all_relations_best_head"] == head_name(overall["layer"], overall["head"])
    assert report.metrics["all_relations_head_accuracy"] == overall["head_accuracy"]
    assert (report.train_sentences, report.dev_sentences) == (8, 5)
    assert report.metrics["dev_sentences"] == 5
    assert "probe_words_uas" not in report.metrics  # no word vectors given
    metrics = report.metrics
    # every word is scored (no PUNCT): UAS counts right heads out of all dev words
    words = len(TREE.words) + sum(len(t.words) for t in trees[8:])
    assert is_share_of(metrics["probe_uas"], words)
    # right-branching (head = next word, last word = root) finds TREE's "the" and "dog" only:
    # the random trees' words all have their heads to the left
    assert metrics["right_branching_uas"] == pytest.approx(2 / words)
    assert metrics["probe_uas_ci_low"] <= metrics["probe_uas"] <= metrics["probe_uas_ci_high"]
    assert metrics["probe_minus_right_branching"] == pytest.approx(
        metrics["probe_uas"] - metrics["right_branching_uas"]
    )
    assert metrics["dep_head_minus_offset"] == pytest.approx(
        metrics["dep_head_accuracy"] - metrics["dep_offset_accuracy"]
    )

    glove = tmp_path / "glove.txt"
    glove.write_text("the 1 0\ndog 0 1\n")
    settings = tiny_syntax_settings(str(glove))
    with_words = analyse_syntax(tiny_encoder, tokenizer, trees[:8], trees[8:], settings, 0)
    assert is_share_of(with_words.metrics["probe_words_uas"], sum(len(t.words) for t in trees[8:]))
    assert with_words.metrics["word_vector_coverage"] == pytest.approx(2 / 5)


def test_clark_syntax_and_coref_stages_on_the_micro_profile(micro_stage, shared_data):
    from stages import clark_coref, clark_syntax

    stage = micro_stage(settings={"paths.shared_data": str(shared_data)})
    clark_syntax.run(stage)
    syntax = json.loads(stage.out("metrics", "clark_syntax", "ud.json").read_text())
    assert syntax["train_sentences"] == 24
    assert syntax["probe_uas_ci_low"] <= syntax["probe_uas"] <= syntax["probe_uas_ci_high"]
    assert syntax["probe_uas"] == pytest.approx(
        syntax["right_branching_uas"] + syntax["probe_minus_right_branching"], abs=1e-5
    )
    assert not [key for key in syntax if key.endswith("seconds")]
    table = pd.read_csv(stage.out("plots", "clark_syntax", "relations.csv"))
    assert table["relation"].iloc[-1] == ALL
    np.testing.assert_allclose(
        table["head_accuracy"], table["offset_accuracy"] + table["head_minus_offset"], atol=1e-5
    )
    assert table["head_accuracy"].iloc[-1] == pytest.approx(
        syntax["all_relations_head_accuracy"], abs=1e-5
    )
    assert (table["head_minus_offset_ci_low"] <= table["head_minus_offset_ci_high"]).all()
    assert table["layer"].between(1, 2).all() and table["head"].between(1, 4).all()
    overall = table.iloc[-1]
    assert syntax["all_relations_best_head"] == f"L{int(overall['layer'])}-H{int(overall['head'])}"
    caption = drawn(stage.out("figures", "clark_syntax", "relations.png"))
    assert f"UD dev ({syntax['dev_sentences']} sentences)" in caption

    clark_coref.run(stage)
    coref = json.loads(stage.out("metrics", "clark_coref", "gap.json").read_text())
    assert coref["report_examples"] == 8  # clark_coref.report_examples of the micro profile
    assert is_share_of(coref["nearest_baseline_accuracy"], coref["report_examples"])
    assert coref["head_minus_nearest"] == pytest.approx(
        coref["head_accuracy"] - coref["nearest_baseline_accuracy"]
    )
    assert coref["head_minus_nearest_ci_low"] <= coref["head_minus_nearest_ci_high"]
    assert not [key for key in coref if key.endswith("seconds")]
    heads = pd.read_csv(stage.out("plots", "clark_coref", "heads.csv"))
    assert heads[["layer", "head"]].min().tolist() == [1, 1]
    assert heads[["layer", "head"]].max().tolist() == [2, 4]
    best = heads.loc[heads["select_accuracy"].idxmax()]
    assert coref["best_head"] == f"L{int(best['layer'])}-H{int(best['head'])}"
    assert coref["head_accuracy"] == pytest.approx(best["report_accuracy"], abs=1e-5)
    assert coref["best_report_head_accuracy"] == pytest.approx(heads["report_accuracy"].max())
    caption = drawn(stage.out("figures", "clark_coref", "heads.png"))
    assert f"GAP validation pronouns ({coref['report_examples']}) whose tiny_random" in caption
