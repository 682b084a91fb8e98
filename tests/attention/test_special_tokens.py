"""Special tokens are each tokenizer's own: a BERT WordPiece tokenizer ([CLS] ... [SEP]), a
RoBERTa-style byte-level BPE and an MPNet-style WordPiece, both built in memory (<s> A </s></s>
B </s>, no segment ids), give the same roles to the analyses that look for them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import PreTrainedTokenizerFast

from pipeline.attention.dump_attention import tokenize_examples
from pipeline.clark.attend import target_masks
from pipeline.core.schema import TaskConfig
from pipeline.extensions.measure_comparison import piece_types
from pipeline.kovaleva.formulas import cls_attention
from pipeline.kovaleva.linguistic import piece_type_masks
from pipeline.kovaleva.patterns.features import special_mask
from pipeline.kovaleva.patterns.roles import is_pair, role_channels, sentence_ids

TEXTS = ["the cat sat on the mat.", "a dog ran in the park!", "cats and dogs sat."]
SPACED = ("the cat sat , on the mat .", "a dog ran !")  # BPE: "Ġ,", "Ġ." and "Ġ", "!"
PAIR = TaskConfig(
    name="toy", hub_config="toy", text_columns=["sentence1", "sentence2"], label_names=["a", "b"],
    is_regression=False, metrics=["accuracy"], main_metric="accuracy", eval_split="validation",
)  # fmt: skip


def roberta_style_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer with RoBERTa's special tokens and pair layout."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator([*TEXTS, *SPACED], trainer)
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>"))
    )  # (sep, cls)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", cls_token="<s>", eos_token="</s>",
        sep_token="</s>", pad_token="<pad>", unk_token="<unk>",
        model_input_names=["input_ids", "attention_mask"],
    )  # fmt: skip


def mpnet_style_tokenizer() -> PreTrainedTokenizerFast:
    """An uncased WordPiece tokenizer with MPNet's special tokens and pair layout (what
    all-mpnet-base-v2's tokenizer.json declares: BertNormalizer, BertPreTokenizer, WordPiece,
    RobertaProcessing with <s> and </s>)."""
    specials = ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"]
    words = sorted({w for text in [*TEXTS, *SPACED] for w in re.findall(r"\w+", text)})
    vocab = {token: i for i, token in enumerate([*specials, ".", ",", "!", *words])}
    wordpiece = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wordpiece.decoder = decoders.WordPiece()
    wordpiece.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return PreTrainedTokenizerFast(
        tokenizer_object=wordpiece, bos_token="<s>", cls_token="<s>", eos_token="</s>",
        sep_token="</s>", pad_token="<pad>", unk_token="[UNK]", mask_token="<mask>",
        model_input_names=["input_ids", "attention_mask"],
    )  # fmt: skip


BUILDERS = {"roberta": roberta_style_tokenizer, "mpnet": mpnet_style_tokenizer}


def dumped_pair(tokenizer, first: str, second: str):
    """The pair (first, second) as the attention dump tokenizes it."""
    frame = pd.DataFrame({"idx": [0], "sentence1": [first], "sentence2": [second]})
    return tokenize_examples(tokenizer, PAIR, frame, max_length=64)[0]


@pytest.fixture(params=["bert", "roberta", "mpnet"])
def chosen_tokenizer(request, tokenizer):
    """A BERT WordPiece, a RoBERTa-style byte-level BPE and an MPNet-style WordPiece tokenizer."""
    return tokenizer if request.param == "bert" else BUILDERS[request.param]()


@pytest.fixture
def pair_example(chosen_tokenizer):
    """(tokenizer, the dumped pair example) for each tokenizer."""
    return chosen_tokenizer, dumped_pair(chosen_tokenizer, TEXTS[0], TEXTS[1])


def expected_positions(tokenizer, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(is_cls, is_sep) bool [n] from the tokenizer's own special tokens."""
    pieces = np.asarray(tokens, dtype=object)
    return pieces == tokenizer.cls_token, pieces == tokenizer.sep_token


def test_the_tokenizers_differ_as_intended(pair_example):
    tokenizer, example = pair_example
    tokens = example.tokens.tokens
    assert tokens[0] == tokenizer.cls_token and tokens[-1] == tokenizer.sep_token
    seps = int((np.asarray(tokens) == tokenizer.sep_token).sum())
    assert seps == (3 if tokenizer.cls_token == "<s>" else 2)  # <s> A </s></s> B </s>
    assert ("token_type_ids" in example.row) == (tokenizer.cls_token == "[CLS]")


def test_pattern_roles_use_the_tokenizers_special_tokens(pair_example):
    tokenizer, example = pair_example
    tokens = example.tokens.tokens
    is_cls, is_sep = expected_positions(tokenizer, tokens)
    np.testing.assert_array_equal(special_mask(tokens), is_cls | is_sep)
    cls, sep, same = role_channels(tokens)  # each [n, n]
    np.testing.assert_array_equal(cls[0].astype(bool), is_cls)
    np.testing.assert_array_equal(sep[0].astype(bool), is_sep)
    assert is_pair(tokens) and not is_pair(tokenizer(TEXTS[2]).tokens())
    first_a, first_b = 1, len(tokens) - 2  # a piece of each sentence
    assert same[first_a, first_a] == 1 and same[first_a, first_b] == 0
    sentences = sentence_ids(tokens)
    assert sentences[first_a] == 0 and sentences[first_b] > 0
    plain = ~(is_cls | is_sep)  # the dump gives a special token its left neighbour's segment
    np.testing.assert_array_equal(example.tokens.segment_ids[plain] > 0, sentences[plain] > 0)


def test_measures_and_clark_targets_find_the_same_special_tokens(pair_example):
    tokenizer, example = pair_example
    tokens = example.tokens.tokens
    is_cls, is_sep = expected_positions(tokenizer, tokens)
    types = piece_types(example.row["input_ids"], tokenizer)  # 0 [CLS], 1 [SEP]
    np.testing.assert_array_equal(types == 0, is_cls)
    np.testing.assert_array_equal(types == 1, is_sep)
    masks = target_masks(tokens, example.tokens.word_ids, punctuation=[".", "!"])
    np.testing.assert_array_equal(masks["cls"][0][0], is_cls)
    np.testing.assert_array_equal(masks["sep"][0][0], is_sep)


def test_punctuation_is_found_whatever_the_word_mark(chosen_tokenizer):
    """Punctuation after a space is "Ġ," in byte-level BPE and "," in WordPiece: the measures'
    punctuation type and Clark's punct target find both."""
    example = dumped_pair(chosen_tokenizer, *SPACED)
    tokens = example.tokens.tokens
    special = np.asarray(example.tokens.word_ids) < 0
    texts = np.asarray([t.replace("\u0120", "") for t in tokens], dtype=object)  # [n]
    if isinstance(chosen_tokenizer.backend_tokenizer.model, models.BPE):
        assert {"\u0120,", "\u0120."} <= set(tokens)  # the marked pieces are there to be found
    types = piece_types(example.row["input_ids"], chosen_tokenizer)
    np.testing.assert_array_equal(types == 2, np.isin(texts, [",", ".", "!"]) & ~special)
    punct = target_masks(tokens, example.tokens.word_ids, punctuation=[".", ","])["punct"][0][0]
    np.testing.assert_array_equal(punct, np.isin(texts, [",", "."]) & ~special)


def test_the_sep_pair_between_two_sentences_is_sep_to_every_analysis(pair_example):
    """<s> A </s></s> B </s>: both pieces of the pair between the sentences are [SEP] (token
    types, Clark's sep target and its sep->sep cells, the vertical pattern's special tokens,
    Kovaleva's linguistic [SEP] type) and <s> alone is [CLS], the query row that the last
    layer's [CLS] figure reads."""
    tokenizer, example = pair_example
    tokens = example.tokens.tokens
    is_cls, is_sep = expected_positions(tokenizer, tokens)
    seps = np.flatnonzero(is_sep)
    if tokenizer.cls_token == "<s>":
        assert seps[1] == seps[0] + 1 and len(seps) == 3  # the </s></s> pair, then the last
    word_ids = np.asarray(example.tokens.word_ids)
    np.testing.assert_array_equal(word_ids < 0, is_cls | is_sep)
    masks = piece_type_masks(
        word_ids, example.tokens.segment_ids, np.zeros((len(tokens), 2), int), [[], [], []], {}
    )
    np.testing.assert_array_equal(masks["[CLS]"], is_cls)
    np.testing.assert_array_equal(masks["[SEP]"], is_sep)
    targets = target_masks(tokens, word_ids, punctuation=["."])
    np.testing.assert_array_equal(targets["sep->sep"][0], is_sep[:, None] & is_sep[None])
    assert targets["sep->sep"][1] == len(seps)
    assert np.flatnonzero(is_cls).tolist() == [0]
    maps = np.random.default_rng(0).random((2, 3, len(tokens), len(tokens)))  # [L, H, n, n]
    np.testing.assert_array_equal(
        cls_attention(maps)[0], maps[-1, :, int(np.flatnonzero(is_cls)[0])]
    )
