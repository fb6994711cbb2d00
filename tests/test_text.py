import pickle

import numpy as np
import pandas as pd
import pytest

from elmofeat.text import RaggedIds, TextTokenizer, Vocabulary, validate_documents


def test_validate_documents_accepts_iterables_of_str():
    assert validate_documents(("a", "b")) == ["a", "b"]
    assert validate_documents(x for x in ["a", "b"]) == ["a", "b"]
    assert validate_documents(pd.Series(["a", "b"])) == ["a", "b"]
    out = validate_documents(np.array(["a", "b"]))
    assert out == ["a", "b"] and all(type(d) is str for d in out)


@pytest.mark.parametrize(
    "bad, error, match",
    [
        ("text", TypeError, "single str"),
        (b"text", TypeError, "single bytes"),
        (None, TypeError, "got None"),
        (3.5, TypeError, "got float"),
        ({"a": 1}, TypeError, "dict"),
        (pd.DataFrame({"t": ["a"]}), TypeError, "DataFrame"),
        (np.array([["a"], ["b"]]), TypeError, r"shape \(2, 1\)"),
        (["a", None], TypeError, r"X\[1\] is None"),
        (["a", "b", np.nan], ValueError, r"X\[2\] is a missing value"),
        (pd.Series(["a", None, "c"], dtype="string"), ValueError, r"X\[1\] is a missing value"),
        (["a", b"b"], TypeError, r"X\[1\] is bytes; decode"),
        ([1, "b"], TypeError, r"X\[0\] is of type int"),
        ([["nested"]], TypeError, r"X\[0\] is of type list"),
    ],
)
def test_validate_documents_rejects_bad_input_with_position(bad, error, match):
    with pytest.raises(error, match=match):
        validate_documents(bad)


def test_validate_documents_uses_given_name():
    with pytest.raises(TypeError, match=r"texts\[0\] is None"):
        validate_documents([None], name="texts")


def test_tokenizer_follows_sklearn_conventions():
    docs = ["Hello, World! a b", "Äpfel und Birnen"]
    assert TextTokenizer()(docs) == [["hello", "world"], ["äpfel", "und", "birnen"]]
    assert TextTokenizer(lowercase=False)(docs)[0] == ["Hello", "World"]
    assert TextTokenizer(token_pattern=r"\S+")(docs)[0] == ["hello,", "world!", "a", "b"]
    assert TextTokenizer(tokenizer=str.split, lowercase=False)(docs)[0][0] == "Hello,"
    with pytest.raises(TypeError, match="tokenizer must be callable"):
        TextTokenizer(tokenizer="split")


def test_vocabulary_orders_by_count_then_alphabetically_and_filters():
    docs = [["b", "a", "c", "c"], ["a", "d", "c"], ["b"]]
    vocab = Vocabulary.build(docs)
    assert vocab.tokens == ["c", "a", "b", "d"]
    assert vocab.counts.tolist() == [3, 2, 2, 1]
    assert Vocabulary.build(docs, min_count=2).tokens == ["c", "a", "b"]
    assert Vocabulary.build(docs, max_features=2).tokens == ["c", "a"]
    assert "a" in vocab and "zz" not in vocab


def test_vocabulary_specials_and_unknown():
    vocab = Vocabulary.build([["x", "<unk>", "y", "x"]], specials=("<pad>", "<unk>"), unknown="<unk>")
    assert vocab.tokens[:2] == ["<pad>", "<unk>"] and vocab.tokens[2] == "x"
    assert vocab.unknown_id == 1
    encoded = vocab.encode([["x", "nope"], [], ["y"]])
    assert encoded.ids.tolist() == [2, 1, 3]
    assert encoded.offsets.tolist() == [0, 2, 2, 3]
    with pytest.raises(ValueError, match="unknown token"):
        Vocabulary.build([["x"]], unknown="<unk>")


@pytest.mark.parametrize("kwargs", [{"min_count": 0}, {"min_count": 1.5}, {"max_features": 0}])
def test_vocabulary_rejects_bad_limits(kwargs):
    with pytest.raises(ValueError):
        Vocabulary.build([["a"]], **kwargs)


def test_vocabulary_encode_matches_dict_lookup_on_random_corpus():
    rng = np.random.RandomState(0)
    words = [f"w{i}" for i in range(300)]
    docs = [[words[j] for j in rng.zipf(1.3, size=rng.randint(0, 30)) % 300] for _ in range(200)]
    vocab = Vocabulary.build(docs, min_count=3)
    lookup = {t: i for i, t in enumerate(vocab.tokens)}
    encoded = vocab.encode(docs)
    for i, doc in enumerate(docs):
        assert encoded[i].tolist() == [lookup.get(t, -1) for t in doc]


def test_vocabulary_pickle_drops_derived_index():
    vocab = Vocabulary.build([["a", "b"]])
    vocab.encode([["a"]])
    assert vocab._index is not None
    restored = pickle.loads(pickle.dumps(vocab))
    assert restored._index is None
    assert restored.encode([["b", "a"]]).ids.tolist() == [1, 0]


def test_ragged_ids_drop_keeps_document_boundaries():
    corpus = RaggedIds(np.array([5, -1, 6, -1, -1, 7]), np.array([0, 3, 3, 5, 6]))
    kept = corpus.drop(corpus.ids < 0)
    assert kept.ids.tolist() == [5, 6, 7]
    assert kept.offsets.tolist() == [0, 2, 2, 2, 3]
    assert corpus.document_index().tolist() == [0, 0, 0, 2, 2, 3]


def test_missing_values_of_any_float_type_and_offsets_in_messages():
    import numpy as np
    import pandas as pd

    for missing in (np.float32("nan"), np.float64("nan"), float("nan"), pd.NA, pd.NaT):
        with pytest.raises(ValueError, match=r"X\[1\] is a missing value"):
            validate_documents(["a", missing])
    with pytest.raises(TypeError, match=r"X\[1201\] is None"):
        validate_documents(["a", None], offset=1200)


def test_invalid_token_pattern_is_a_value_error():
    with pytest.raises(ValueError, match=r"token_pattern '\(' is not a valid regular expression"):
        TextTokenizer(token_pattern="(")


def test_lone_surrogates_are_ordinary_unknown_tokens():
    # A lone surrogate is a valid Python str but not valid UTF-8: pandas' Arrow strings
    # reject it, so a lookup built on them crashed inside pyarrow (found by the fuzz suite).
    vocab = Vocabulary.build([["a", "b"]], specials=("<unk>",), unknown="<unk>")
    ids = vocab.encode([["a", "\ud800"], ["\udfff", "b"]]).ids
    assert ids.tolist() == [vocab.tokens.index("a"), vocab.unknown_id, vocab.unknown_id,
                            vocab.tokens.index("b")]
    assert "\ud800" not in vocab
