"""Universal Dependencies treebanks: CoNLL-U reading, the seeded sample and one-line errors."""

from __future__ import annotations

import pytest

from pipeline.clark.ud import (
    read_conllu,
    read_treebank_sample,
)
from pipeline.core.errors import PipelineError
from pipeline.data.sampling import seeded_subset

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
