"""elmofeat.bilm.pretrained: word vector files and corpus SVD vectors as starting points."""

import gzip

import numpy as np
import pytest
import torch
from gensim.models import KeyedVectors

from elmofeat import BiLM, SkipGramVectorizer
from elmofeat.wordvectors.io import load_word_vectors
from .conftest import TINY, weights_of


def _glove_file(path, words, dim, header=False, gz=False):
    rng = np.random.RandomState(0)
    vectors = rng.randn(len(words), dim).astype(np.float32)
    lines = [f"{len(words)} {dim}"] if header else []
    lines += [w + " " + " ".join(f"{x:.6f}" for x in v) for w, v in zip(words, vectors)]
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return dict(zip(words, vectors))


@pytest.mark.parametrize("header, gz", [(False, False), (True, False), (False, True)])
def test_word_vector_files_are_read_with_or_without_header(tmp_path, header, gz):
    path = tmp_path / ("v.txt.gz" if gz else "v.txt")
    truth = _glove_file(path, ["alpha", "beta", "gamma"], 4, header, gz)
    kv = load_word_vectors(path)
    assert kv.index_to_key == ["alpha", "beta", "gamma"]
    np.testing.assert_allclose(kv["beta"], truth["beta"], atol=1e-6)
    with pytest.raises(FileNotFoundError, match="not found"):
        load_word_vectors(tmp_path / "missing.txt")


def test_fit_with_pretrained_keyed_vectors_logs_coverage(corpus, caplog):
    kv = KeyedVectors(vector_size=10)
    words = [f"topic0word{i}" for i in range(12)] + ["common1", "notinthecorpus"]
    kv.add_vectors(words, np.random.RandomState(0).randn(len(words), 10).astype(np.float32))
    with caplog.at_level("INFO", logger="elmofeat"):
        bilm = BiLM(**{**TINY, "max_epochs": 1, "pretrained_vectors": kv}).fit(corpus)
    assert bilm.pretrained_coverage_["found"] == 13
    assert bilm.pretrained_coverage_["missing"] == len(bilm.vocabulary_) - 4 - 13
    assert "pretrained vectors cover 13" in caplog.text
    assert bilm.language_model_.encoder.token_layer.projection is not None  # 10 -> 16
    assert bilm.embed(["topic0word1 ."])[0].shape == (2, 3, 32)


def test_fit_with_glove_file_and_with_vectorizers(corpus, tmp_path, monkeypatch):
    import elmofeat.bilm.pretrained as pretrained

    path = tmp_path / "glove.txt"
    _glove_file(path, ["topic0word1", "common2", ".", "unused", "words"], 16)
    asked = []
    original = pretrained.load_word_vectors
    monkeypatch.setattr(pretrained, "load_word_vectors",
                        lambda p, words=None, first=0: asked.append(words) or original(p, words, first))
    bilm = BiLM(**{**TINY, "max_epochs": 1, "pretrained_vectors": str(path)}).fit(corpus)
    assert bilm.pretrained_coverage_["found"] == 3
    # The file is read for the vocabulary's words only (the specials are never looked up).
    assert sorted(asked[0]) == sorted(bilm.vocabulary_.tokens[4:])
    assert bilm.language_model_.encoder.token_layer.projection is None
    fitted_vec = SkipGramVectorizer(vector_size=16, min_count=1, random_state=0).fit(corpus)
    a = BiLM(**{**TINY, "max_epochs": 1, "pretrained_vectors": fitted_vec}).fit(corpus)
    b = BiLM(**{**TINY, "max_epochs": 1,
                "pretrained_vectors": SkipGramVectorizer(vector_size=16, min_count=1, random_state=0)}).fit(corpus)
    assert a.pretrained_coverage_["found"] > 40
    for x, y in zip(weights_of(a).values(), weights_of(b).values()):
        assert torch.equal(x, y)


def test_corpus_vectors_are_the_svd_vectors_of_the_training_texts(corpus):
    from elmofeat import SVDVectorizer
    from elmofeat.text import Vocabulary
    from elmofeat.bilm.batching import SPECIALS, UNK
    from elmofeat.bilm.pretrained import corpus_vectors

    tokens = BiLM()._tokenize(corpus)
    vocabulary = Vocabulary.build(tokens, min_count=2, specials=SPECIALS, unknown=UNK)
    matrix, coverage = corpus_vectors(tokens, vocabulary, len(SPECIALS), 8, np.random.RandomState(0))
    assert np.isnan(matrix[:4]).all() and coverage == {"found": len(vocabulary) - 4, "missing": 0}
    np.testing.assert_allclose(np.linalg.norm(matrix[4:], axis=1).mean(), 1.0, rtol=1e-5)
    svd = SVDVectorizer(n_components=8, min_count=2, token_pattern=BiLM().token_pattern,
                        random_state=np.random.RandomState(0)).fit(corpus)
    expected = svd.keyed_vectors_[vocabulary.tokens[4:]]
    # The same vectors up to one scale factor (the SVD vectorizer does not rescale).
    ratio = np.linalg.norm(expected, axis=1) / np.linalg.norm(matrix[4:], axis=1)
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-4)
    np.testing.assert_allclose(matrix[4:] * ratio[0], expected, rtol=1e-3, atol=1e-5)
    # A vocabulary smaller than the embedding: the extra columns are small noise.
    wide, _ = corpus_vectors(tokens, vocabulary, len(SPECIALS), 200, np.random.RandomState(0))
    assert np.isfinite(wide[4:]).all() and wide.shape == (len(vocabulary), 200)


def test_token_init_svd_starts_the_embedding_from_the_counts(corpus):
    from elmofeat.bilm import estimator

    started = {}
    original = estimator.BiLM._build_language_model

    def spy(self, n_words, pretrained=None, input_dim=None):
        started["pretrained"] = None if pretrained is None else pretrained.copy()
        return original(self, n_words, pretrained, input_dim)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(estimator.BiLM, "_build_language_model", spy)
        svd = BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)
        assert started["pretrained"] is not None and np.isfinite(started["pretrained"][4:]).all()
        BiLM(**{**TINY, "max_epochs": 1, "token_init": "random"}).fit(corpus)
        assert started["pretrained"] is None
        BiLM(**{**TINY, "max_epochs": 1, "token_layer": "char"}).fit(corpus)
        assert started["pretrained"] is None  # ignored by the character CNN
    again = BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)
    for x, y in zip(weights_of(svd).values(), weights_of(again).values()):
        assert torch.equal(x, y)


def _embedding(bilm):
    return bilm.language_model_.encoder.token_layer.embedding.weight.detach().clone()


def test_freeze_embedding_keeps_the_starting_vectors_while_the_lstms_learn(corpus):
    # One more epoch changes every LSTM weight but not a frozen embedding; a trained
    # one moves.
    one = BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)
    two = BiLM(**{**TINY, "max_epochs": 2, "patience": None}).fit(corpus)
    assert torch.equal(_embedding(one), _embedding(two))
    lstm = "encoder.forward_lstm.layers.0.weight_hh_l0"
    assert not torch.equal(weights_of(one)[lstm], weights_of(two)[lstm])
    trained = [BiLM(**{**TINY, "max_epochs": n, "patience": None, "freeze_embedding": False}).fit(corpus)
               for n in (1, 2)]
    assert not torch.equal(_embedding(trained[0]), _embedding(trained[1]))
    # Same start, same data: the frozen embedding is where the trained one began.
    assert torch.equal(_embedding(one), _embedding(BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)))


@pytest.mark.parametrize("params", [
    {"token_init": "random"},  # nothing to keep: a random start is trained
    {"softmax": "full", "tie_weights": True},  # the output layer is the embedding
])
def test_freeze_embedding_is_ignored_where_the_embedding_must_learn(corpus, params):
    fits = [BiLM(**{**TINY, **params, "max_epochs": n, "patience": None}).fit(corpus)
            for n in (1, 2)]
    assert not torch.equal(_embedding(fits[0]), _embedding(fits[1]))


def test_frozen_pretrained_vectors_of_another_width_keep_the_table_and_learn_the_projection(
        corpus, tmp_path):
    words = sorted({w for doc in corpus for w in doc.lower().split()})
    truth = _glove_file(tmp_path / "v.txt", words, 8)
    fits = [BiLM(**{**TINY, "max_epochs": n, "patience": None,
                    "pretrained_vectors": str(tmp_path / "v.txt")}).fit(corpus) for n in (1, 2)]
    table = _embedding(fits[1])
    row = fits[1].vocabulary_.tokens.index(words[0])
    np.testing.assert_allclose(table[row].numpy(), truth[words[0]], atol=1e-6)
    assert torch.equal(_embedding(fits[0]), table)
    projection = "encoder.token_layer.projection.weight"
    assert not torch.equal(weights_of(fits[0])[projection], weights_of(fits[1])[projection])
