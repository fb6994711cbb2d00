import pickle

import numpy as np
import pytest
from gensim.models import Word2Vec
from sklearn.utils import check_random_state

from elmofeat import SkipGramVectorizer
from elmofeat.text import TextTokenizer

from .estimator_checks import make_topic_corpus


def test_vectors_are_exactly_gensims_with_the_same_parameters():
    docs, _ = make_topic_corpus(200)
    vec = SkipGramVectorizer(vector_size=12, min_count=2, epochs=3, random_state=7).fit(docs)
    seed = int(check_random_state(7).randint(2**31 - 1))
    model = Word2Vec(sentences=TextTokenizer()(docs), **vec._gensim_params(seed, 3))
    assert vec.keyed_vectors_.index_to_key == model.wv.index_to_key
    np.testing.assert_array_equal(vec.keyed_vectors_.vectors, model.wv.vectors)
    params = vec._gensim_params(seed, 3)
    assert params["sg"] == 1 and params["hs"] == 0 and params["negative"] == 5


def test_auto_epochs_adapt_to_the_corpus_size():
    from elmofeat.wordvectors.skipgram import auto_epochs

    docs, _ = make_topic_corpus(200)
    n_tokens = sum(len(t) for t in TextTokenizer()(docs))
    vec = SkipGramVectorizer(vector_size=8, random_state=0).fit(docs)
    assert vec.epochs == "auto" and vec.epochs_ == auto_epochs(n_tokens) == 100  # tiny corpus
    assert auto_epochs(1_000_000) == 5 and auto_epochs(100_000) == 50
    assert SkipGramVectorizer(vector_size=8, epochs=3, random_state=0).fit(docs).epochs_ == 3
    with pytest.raises(ValueError, match="'epochs' parameter of SkipGramVectorizer must be a str among {'auto'} or an int"):
        SkipGramVectorizer(epochs="many").fit(docs)


def test_only_keyed_vectors_are_kept_and_pickles_are_small():
    docs, _ = make_topic_corpus(200)
    vec = SkipGramVectorizer(vector_size=50, min_count=1, random_state=0).fit(docs)
    n_words = len(vec.keyed_vectors_)
    assert not any(isinstance(v, Word2Vec) for v in vars(vec).values())
    assert vec.keyed_vectors_.vectors_lockf is None
    size = len(pickle.dumps(vec))
    # The vectors themselves plus vocabulary strings; no output weights (which would double it).
    assert size < 1.5 * n_words * 50 * 4 + 20_000


def test_topic_words_are_neighbours():
    docs, _ = make_topic_corpus(600)
    kv = SkipGramVectorizer(vector_size=16, min_count=1, epochs=10, random_state=0).fit(docs).keyed_vectors_
    neighbours = [w for w, _ in kv.most_similar("topic1word3", topn=5)]
    assert sum(w.startswith("topic1") for w in neighbours) >= 4


def test_documents_longer_than_gensims_limit_are_not_truncated():
    # gensim silently truncates sentences at 10,000 tokens; words that only occur after
    # that point must still be learnt.
    filler = " ".join(["filler"] * 10_500)
    doc = filler + " " + " ".join(["latecomer", "word"] * 10)
    vec = SkipGramVectorizer(vector_size=4, min_count=5, epochs=1, random_state=0).fit([doc])
    assert "latecomer" in vec.keyed_vectors_.key_to_index


def test_different_random_states_give_different_vectors():
    docs, _ = make_topic_corpus(100)
    a = SkipGramVectorizer(vector_size=8, min_count=1, random_state=0).fit(docs).transform(docs)
    b = SkipGramVectorizer(vector_size=8, min_count=1, random_state=1).fit(docs).transform(docs)
    assert not np.allclose(a, b)


def test_several_workers_train_and_give_finite_features():
    docs, _ = make_topic_corpus(200)
    out = SkipGramVectorizer(vector_size=8, min_count=1, workers=2, random_state=0).fit_transform(docs)
    assert out.shape == (200, 8) and np.isfinite(out).all()


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"vector_size": 0}, ValueError, "vector_size"),
        ({"negative": 0}, ValueError, "negative"),
        ({"epochs": 0}, ValueError, "epochs"),
        ({"workers": 0}, ValueError, "workers"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"window": "5"}, TypeError, "window"),
        ({"min_count": 1000}, ValueError, "vocabulary is empty"),
    ],
)
def test_bad_parameters_raise_at_fit(params, error, match):
    docs, _ = make_topic_corpus(20)
    with pytest.raises(error, match=match):
        SkipGramVectorizer(**{"vector_size": 4, "min_count": 1, **params}).fit(docs)


def test_no_tokens_is_a_clear_error():
    with pytest.raises(ValueError, match="no token"):
        SkipGramVectorizer(min_count=1).fit(["", "!!"])
