import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline

from elmofeat import BiLM, ElmoVectorizer, make_hybrid

from .estimator_checks import make_topic_corpus


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus(120)


@pytest.fixture(scope="module")
def bilm(corpus):
    return BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0).fit(corpus[0])


def test_blocks_are_side_by_side_and_scaled(corpus, bilm):
    X, y = corpus
    hybrid = make_hybrid(ElmoVectorizer(bilm, layer_mix="frozen", bag_size=None, cache_dir=None),
                         elmo_weight=0.3).fit(X, y)
    out = hybrid.transform(X)
    assert sp.issparse(out)
    n_words = len(hybrid.named_transformers["tfidf"].vocabulary_)
    assert out.shape == (len(X), n_words + 16)
    lexical, dense = out[:, :n_words].toarray(), out[:, n_words:].toarray()
    np.testing.assert_allclose(np.linalg.norm(lexical, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(dense, axis=1), 0.3, rtol=1e-5)
    # The ELMo block is centred on the training documents before its rows are scaled.
    raw = ElmoVectorizer(bilm, layer_mix="frozen", bag_size=None, cache_dir=None).fit(X).transform(X)
    centred = raw - raw.mean(0)
    expected = 0.3 * centred / np.linalg.norm(centred, axis=1, keepdims=True)
    np.testing.assert_allclose(dense, expected, rtol=1e-4, atol=1e-6)


def test_default_is_frozen_and_needs_no_labels():
    hybrid = make_hybrid()
    elmo = hybrid.named_transformers["elmo"].named_steps["elmo"]
    assert isinstance(elmo, ElmoVectorizer) and elmo.layer_mix == "frozen"
    assert hybrid.transformer_weights == {"elmo": 0.2}


def test_searchable_and_saved_in_a_pipeline(corpus, bilm, tmp_path):
    X, y = corpus
    pipe = Pipeline([("features", make_hybrid(ElmoVectorizer(bilm, cache_dir=None))),
                     ("clf", LogisticRegression(C=10, max_iter=500))])
    search = GridSearchCV(pipe, {"features__elmo__elmo__layer_mix": ["frozen", "trainable"],
                                 "features__transformer_weights": [{"elmo": 0.1}, {"elmo": 0.5}]},
                          cv=2).fit(X, y)
    assert search.best_score_ > 0.5
    # The fitted biLM is shared by every candidate, never pretrained again.
    best_elmo = search.best_estimator_.named_steps["features"].named_transformers["elmo"]
    assert best_elmo.named_steps["elmo"].bilm_ is bilm
    joblib.dump(search.best_estimator_, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib")
    np.testing.assert_array_equal(loaded.predict(X[:10]), search.best_estimator_.predict(X[:10]))


def test_weight_zero_is_tfidf_alone(corpus, bilm):
    # The lower end of a weight search: the ELMo block weighs nothing, and the model is
    # TF-IDF + LogisticRegression (zero columns get zero coefficients).
    X, y = corpus
    hybrid = make_pipeline(make_hybrid(ElmoVectorizer(bilm, cache_dir=None), elmo_weight=0.0),
                           LogisticRegression(C=10, max_iter=1000)).fit(X, y)
    alone = make_pipeline(TfidfVectorizer(sublinear_tf=True),
                          LogisticRegression(C=10, max_iter=1000)).fit(X, y)
    np.testing.assert_allclose(hybrid.decision_function(X), alone.decision_function(X),
                               atol=1e-4)
    weighted = make_pipeline(make_hybrid(ElmoVectorizer(bilm, cache_dir=None), elmo_weight=0.5),
                             LogisticRegression(C=10, max_iter=1000)).fit(X, y)
    assert not np.allclose(weighted.decision_function(X), alone.decision_function(X), atol=1e-4)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"elmo_weight": -1}, ValueError, "elmo_weight must be a number >= 0"),
    ({"elmo_weight": float("nan")}, ValueError, "elmo_weight"),
    ({"elmo_weight": "big"}, ValueError, "elmo_weight"),
    ({"elmo": "elmo"}, TypeError, "elmo must be a transformer with dense output"),
    ({"elmo": LogisticRegression()}, TypeError, "elmo must be a transformer .* LogisticRegression"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_hybrid(**kwargs)


def test_any_dense_transformer_is_the_dense_block():
    """make_hybrid used to refuse every block but an ElmoVectorizer; SVD features (or a
    fine-tuned vectorizer, averaged word vectors) are centred, unit-normed and weighted
    the same way."""
    from elmofeat import SVDVectorizer

    from .estimator_checks import make_topic_corpus

    docs, _ = make_topic_corpus(40)
    svd = SVDVectorizer(n_components=4, random_state=0)
    features = make_hybrid(svd, elmo_weight=0.5).fit_transform(docs)
    n_words = len(TfidfVectorizer(sublinear_tf=True).fit(docs).vocabulary_)
    dense = features[:, n_words:].toarray()
    assert dense.shape[1] == svd.fit(docs).transform(docs[:1]).shape[1]
    np.testing.assert_allclose(np.linalg.norm(dense, axis=1), 0.5)


def test_one_shot_iterables_are_read_once_everywhere():
    """fit_transform(generator) used to return 0 rows (SVD, skip-gram, word vectors) or
    fail with 'X is empty' (the hybrid): a generator is read once, like a list."""
    from elmofeat import BiLM, ElmoVectorizer, SkipGramVectorizer, SVDVectorizer, make_hybrid

    from .estimator_checks import make_topic_corpus

    docs, _ = make_topic_corpus(40)
    for vectorizer in (SVDVectorizer(n_components=4, random_state=0),
                       SkipGramVectorizer(vector_size=4, epochs=1, random_state=0, workers=1),
                       make_hybrid(ElmoVectorizer(BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1,
                                                       random_state=0), cache_dir=None))):
        from_list = vectorizer.fit_transform(docs)
        from_generator = vectorizer.fit_transform(doc for doc in docs)
        assert from_generator.shape == from_list.shape and from_list.shape[0] == 40
        assert vectorizer.transform(doc for doc in docs[:3]).shape[0] == 3


def test_a_streamed_corpus_with_an_unfitted_vectorizer_start_is_refused_clearly():
    """A generator is a streamed corpus: an unfitted SVDVectorizer cannot be fitted on it
    as well (it would need a second pass); the error says so (it used to be 'X is empty')."""
    from elmofeat import BiLM, SVDVectorizer

    from .estimator_checks import make_topic_corpus

    docs, _ = make_topic_corpus(30)
    bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0,
                pretrained_vectors=SVDVectorizer(n_components=8))
    with pytest.raises(ValueError, match="a streamed corpus cannot fit an unfitted vectorizer"):
        bilm.fit(doc for doc in docs)
    fitted = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0,
                  pretrained_vectors=SVDVectorizer(n_components=8).fit(docs)).fit(d for d in docs)
    assert fitted.output_dim_ == 16


@pytest.mark.parametrize("bad, error, match", [
    (["a cat", None], TypeError, r"X\[1\] is None"),
    ([b"a cat", b"a dog"], TypeError, r"X\[0\] is bytes; decode it"),
    (["a cat", float("nan")], ValueError, r"X\[1\] is a missing value"),
    ("a cat", TypeError, "wrap it in a list"),
])
def test_bad_documents_get_the_vectorizers_errors_before_tfidf_sees_them(corpus, bilm, bad,
                                                                          error, match):
    # They reached TfidfVectorizer first: "'NoneType' object has no attribute 'lower'",
    # "empty vocabulary" for bytes.
    hybrid = make_hybrid(ElmoVectorizer(bilm, layer_mix="frozen"))
    with pytest.raises(error, match=match):
        hybrid.fit(bad)
    hybrid.fit(corpus[0][:20])
    with pytest.raises(error, match=match):
        hybrid.transform(bad)
