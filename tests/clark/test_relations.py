"""Heads as dependency parsers: predicted heads, the best head and offset per relation, and
rebuilt prepositional arcs."""

from __future__ import annotations

import re

import pytest
import torch

from pipeline.clark.published import NOT_SPECIALISED, SPECIALISED
from pipeline.clark.relations import (
    ALL,
    ArcOutcomes,
    offset_heads,
    predict_heads,
    select_and_report,
)
from pipeline.clark.ud import (
    Arc,
    Sentence,
    rebuilt_prepositions,
)
from tests.support.clark_inputs import (
    TREE,
    dependent_to_head_map,
)
from tests.support.paths import REPO


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
    `rebuilt`), against pipeline/analyses/clark_syntax/claims.py."""
    text = (REPO / "docs/stages/clark.md").read_text()
    rows = re.findall(r"^  \| (\w+) \| (rebuilt|`[a-z:]+`)", text, flags=re.M)
    documented = {name: ud.strip("`") for name, ud in rows if name != "All"}
    coded = {name: row.scored for name, row in {**SPECIALISED, **NOT_SPECIALISED}.items()}
    coded = {name: "rebuilt" if name in ("prep", "pobj") else ud for name, ud in coded.items()}
    assert documented == coded
