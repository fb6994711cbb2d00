"""StackingVectorizer: each block's own logistic regression, cross-fitted scores."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from elmofeat import BiLM, ElmoClassifier, ElmoVectorizer, StackingVectorizer, make_hybrid

from .estimator_checks import (check_accepts_iterables, check_bad_input, check_not_fitted,
                               check_pickle_in_fresh_process, check_safe_file_in_fresh_process,
                               check_transform_independent_of_batch, make_topic_corpus)


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus(120)


@pytest.fixture(scope="module")
def bilm(corpus):
    return BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16,
                random_state=0).fit(corpus[0])


def _elmo(bilm, **params):
    return ElmoVectorizer(bilm, layer_mix="frozen", bag_size=None, cache_dir=None, **params)


def _stack(bilm, **params):
    params = {"cv": 3, "random_state": 0, **params}
    return StackingVectorizer([("words", TfidfVectorizer()), ("elmo", _elmo(bilm))], **params)


class Noise(TransformerMixin, BaseEstimator):
    """Dense features that know nothing: a fixed random vector per document text."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.vstack([np.random.RandomState(abs(hash(x)) % 2**31).randn(30) for x in X])


def test_scores_are_each_blocks_own_logistic_regression(corpus, bilm):
    X, y = corpus
    stack = _stack(bilm, C=3.0, combine="scores").fit(X, y)
    out = stack.transform(X[:20])
    assert out.shape == (20, 2 * 4) and out.dtype == np.float64
    words = TfidfVectorizer().fit(X)
    expected = LogisticRegression(C=3.0, max_iter=3000, random_state=0).fit(
        words.transform(X), y).decision_function(words.transform(X[:20]))
    # the seed differs (random_state=0 draws the solver's), lbfgs does not use it
    np.testing.assert_allclose(out[:, :4], expected, rtol=1e-4, atol=1e-5)
    dense = _elmo(bilm).fit(X).transform(X).astype(np.float64)
    mean = dense.mean(0)
    expected = LogisticRegression(C=3.0, max_iter=3000).fit(dense - mean, y).decision_function(
        _elmo(bilm).fit(X).transform(X[:20]).astype(np.float64) - mean)
    np.testing.assert_allclose(out[:, 4:], expected, rtol=1e-4, atol=1e-5)
    assert stack.C_ == {"words": 3.0, "elmo": 3.0}
    assert stack.get_feature_names_out().tolist() == [
        f"{block}__{label}" for block in ("words", "elmo") for label in range(4)]


def test_c_is_searched_per_block(corpus):
    from elmofeat._logistic import logistic_regression

    X, y = corpus
    stack = StackingVectorizer([("words", TfidfVectorizer()), ("noise", Noise())]).fit(X, y)
    # each block's own search (random_state=None: seed 0), not one C for both
    words = logistic_regression(seed=0, scoring="neg_log_loss").fit(TfidfVectorizer().fit_transform(X), y).C_
    noise = Noise().transform(X)
    noise = logistic_regression(seed=0, scoring="neg_log_loss").fit(noise - noise.mean(0), y).C_
    assert stack.C_ == {"words": float(words), "noise": float(noise)}
    assert stack.C_["words"] != stack.C_["noise"]


def test_fit_transform_scores_never_saw_their_own_label(corpus):
    X, y = corpus
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    stack = StackingVectorizer([("words", TfidfVectorizer())], C=1.0, cv=folds,
                               combine="scores")
    scores = stack.fit_transform(X, y)
    changed = y.copy()
    i = folds[0][1][0]  # a document of the first test fold
    changed[i] = (y[i] + 1) % 4
    # its own label changed: its cross-fitted scores stay, those of its fold's trainers move
    rescored = clone(stack).fit_transform(X, changed)
    np.testing.assert_array_equal(rescored[i], scores[i])
    j = folds[1][1][0]
    assert not np.allclose(rescored[j], scores[j])
    # transform reads the model fitted on every label: not the cross-fitted scores
    assert not np.allclose(stack.transform(X), scores)


def test_two_classes_give_one_score_per_block(corpus, bilm):
    X, y = corpus
    binary = np.where(y < 2, "low", "high")
    stack = _stack(bilm, combine="scores")
    out = stack.fit_transform(X, binary)
    assert out.shape == (len(X), 2)
    assert stack.get_feature_names_out().tolist() == ["words__low", "elmo__low"]
    blended = _stack(bilm)
    assert blended.fit_transform(X, binary).shape == (len(X), 1)
    assert blended.get_feature_names_out().tolist() == ["blend__low"]
    model = make_pipeline(_stack(bilm), LogisticRegression()).fit(X, binary)
    assert set(model.predict(X[:8])) <= {"low", "high"}


def test_a_block_that_knows_nothing_does_not_dilute_the_others(corpus):
    """The union of make_hybrid, under one C, loses accuracy to a noisy dense block; the
    stack gives it a weight near zero."""
    X, y = make_topic_corpus(240, seed=3)
    words = cross_val_score(make_pipeline(TfidfVectorizer(), LogisticRegression()), X, y, cv=4)
    stack = StackingVectorizer([("words", TfidfVectorizer()), ("noise", Noise())], cv=3,
                               random_state=0)
    stacked = cross_val_score(make_pipeline(stack, LogisticRegression()), X, y, cv=4)
    assert stacked.mean() >= words.mean() - 0.01


def test_a_classifier_block_gives_its_own_cross_fitted_scores(corpus, bilm):
    X, y = corpus
    classifier = make_pipeline(TfidfVectorizer(), LogisticRegression(C=2.0))
    folds = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y))
    stack = StackingVectorizer([("clf", classifier)], cv=folds, combine="scores")
    scores = stack.fit_transform(X, y)
    for train, test in folds:
        model = clone(classifier).fit([X[i] for i in train], y[train])
        np.testing.assert_allclose(scores[test], model.decision_function([X[i] for i in test]))
    np.testing.assert_allclose(stack.transform(X[:5]),
                               clone(classifier).fit(X, y).decision_function(X[:5]))
    # ElmoClassifier as a block: fine-tuned once per fold, then on every document
    elmo = ElmoClassifier(bilm, epochs=1, cache_dir=None, C=1.0, random_state=0)
    stack = StackingVectorizer([("words", TfidfVectorizer()), ("elmo", elmo)], cv=2,
                               random_state=0, combine="scores")
    out = stack.fit_transform(X[:60], y[:60])
    assert out.shape == (60, 8) and np.isfinite(out).all()
    np.testing.assert_allclose(stack.transform(X[:4])[:, 4:],
                               stack.blocks_[1][1].decision_function(X[:4]))


def test_without_labels_it_is_make_hybrids_union(corpus, bilm):
    X, _ = corpus
    union = make_hybrid(_elmo(bilm), elmo_weight=0.2).fit_transform(X)
    stack = StackingVectorizer([("tfidf", TfidfVectorizer(sublinear_tf=True)),
                                ("elmo", _elmo(bilm))])
    out = stack.fit_transform(X)
    assert sp.issparse(out) and not stack.supervised_
    np.testing.assert_allclose(out.toarray(), union.toarray(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(stack.transform(X[:7]).toarray(), union[:7].toarray(),
                               rtol=1e-5, atol=1e-7)
    weighted = clone(stack).set_params(weights={"elmo": 0.5}).fit(X).transform(X[:3])
    dense = weighted[:, len(stack.blocks_[0][1].vocabulary_):].toarray()
    np.testing.assert_allclose(np.linalg.norm(dense, axis=1), 0.5, rtol=1e-5)
    assert stack.get_feature_names_out()[0].startswith("tfidf__")
    with pytest.raises(ValueError, match="classifier"):
        StackingVectorizer([("clf", make_pipeline(TfidfVectorizer(),
                                                  LogisticRegression()))]).fit(X)
    with pytest.raises(ValueError, match=r"weights names blocks that do not exist: \['bag'\]"):
        clone(stack).set_params(weights={"bag": 1.0}).fit(X)


def test_bad_settings_and_labels_are_named(corpus):
    X, y = corpus
    words = ("words", TfidfVectorizer())
    cases = [
        (dict(blocks=[]), ValueError, "blocks is empty"),
        (dict(blocks=[words, ("words", CountVectorizer())]), ValueError, "unique"),
        (dict(blocks=[("a__b", TfidfVectorizer())]), ValueError, "free of '__'"),
        (dict(blocks=[("x", 3)]), TypeError, "no fit method"),
        (dict(blocks=[TfidfVectorizer()]), TypeError, r"\(name, estimator\) pairs"),
        (dict(blocks=[words], C=0.0), ValueError, "'C' parameter"),
        (dict(blocks=[words], cv=1), ValueError, "cv"),
    ]
    for params, error, match in cases:
        with pytest.raises(error, match=match):
            StackingVectorizer(**params).fit_transform(X, y)
    stack = StackingVectorizer([words])
    with pytest.raises(ValueError, match="single class"):
        stack.fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="one class label per document"):
        stack.fit(X, y[:-1])
    binary = np.where(y < 2, 0, 1)
    binary[:118] = 0  # two documents of class 1: not in every fold's training part
    with pytest.raises(ValueError, match="class 1 has 2 documents, fewer than cv=5: with two"):
        stack.fit_transform(X, binary)
    with pytest.raises(ValueError, match="Unknown label type"):
        stack.fit(X, np.linspace(0, 1, len(X)))


def test_the_blend_is_each_blocks_cross_fitted_scores_under_one_weight(corpus, bilm):
    from scipy.special import log_softmax

    X, y = corpus
    y = np.where(np.arange(len(y)) % 5 == 0, (y + 1) % 4, y)  # not separable: a finite optimum
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    scores = _stack(bilm, cv=folds, combine="scores")
    side_by_side = scores.fit_transform(X, y)
    stack = _stack(bilm, cv=folds)
    out = stack.fit_transform(X, y)
    weights = np.array([stack.block_weights_["words"], stack.block_weights_["elmo"]])
    assert out.shape == (len(X), 4) and (weights >= 0).all()
    np.testing.assert_allclose(out, weights[0] * side_by_side[:, :4] + weights[1] * side_by_side[:, 4:])
    new = scores.transform(X[:9])
    np.testing.assert_allclose(stack.transform(X[:9]), weights[0] * new[:, :4] + weights[1] * new[:, 4:])
    # fit alone learns the same weights: from cross-fitted scores, not in-sample ones
    assert clone(stack).fit(X, y).block_weights_ == stack.block_weights_

    # the weights minimise the log-loss of softmax(blend + an intercept per class)
    def loss(w, b):
        z = w[0] * side_by_side[:, :4] + w[1] * side_by_side[:, 4:] + b
        return -log_softmax(z, axis=1)[np.arange(len(y)), y].mean()

    from scipy.optimize import minimize
    best = minimize(lambda b: loss(weights, b), np.zeros(4)).fun
    for other in ([weights[0] * 1.2, weights[1]], [weights[0], weights[1] + 0.1], [1.0, 1.0]):
        assert best <= minimize(lambda b: loss(np.array(other), b), np.zeros(4)).fun + 1e-6


def test_a_block_that_knows_nothing_adds_almost_nothing_to_the_blend(corpus):
    """Each block's share of the blend, its weight times the spread of its scores: the
    words' carries it, the noise block's is near zero."""
    X, y = corpus
    blocks = [("words", TfidfVectorizer()), ("noise", Noise())]
    scores = StackingVectorizer(blocks, cv=3, random_state=0, combine="scores")
    side_by_side = scores.fit_transform(X, y)
    stack = StackingVectorizer(blocks, cv=3, random_state=0).fit(X, y)
    weights = stack.block_weights_
    assert sum(weights.values()) == pytest.approx(1.0)
    words = weights["words"] * side_by_side[:, :4].std()
    noise = weights["noise"] * side_by_side[:, 4:].std()
    assert noise < 0.05 * words


def test_pickles_made_before_combine_keep_their_features(corpus, bilm):
    import pickle

    X, y = corpus
    old = _stack(bilm, combine="scores").fit(X, y)
    state = old.__getstate__()
    del state["combine"]  # as pickled before the parameter existed
    loaded = StackingVectorizer.__new__(StackingVectorizer)
    loaded.__setstate__(state)
    assert loaded.combine == "scores"
    np.testing.assert_array_equal(loaded.transform(X[:5]), old.transform(X[:5]))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(loaded)).transform(X[:5]),
                                  old.transform(X[:5]))


def test_a_class_rarer_than_the_folds_gets_the_lowest_score_where_it_was_not_seen(corpus):
    """More than two classes: a class with fewer documents than folds (a quick slice of
    R8 has one) is missing from some folds' training part; those folds' models give it
    the lowest score they give any class, and the features stay finite."""
    X, y = corpus
    rare = y.copy()
    rare[0] = 9  # one document of class 9
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    stack = StackingVectorizer([("words", TfidfVectorizer())], C=1.0, cv=folds, combine="scores")
    out = stack.fit_transform(X, rare)
    assert out.shape == (len(X), 5) and np.isfinite(out).all()
    test = next(t for _, t in folds if 0 in t)
    train = np.setdiff1d(np.arange(len(X)), test)
    words = TfidfVectorizer().fit(X)
    head = LogisticRegression(C=1.0, max_iter=3000).fit(words.transform([X[i] for i in train]),
                                                        rare[train])
    seen = head.decision_function(words.transform([X[i] for i in test]))
    np.testing.assert_allclose(out[test][:, :4], seen, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out[test][:, 4], seen.min())
    with pytest.warns(UserWarning, match="class 9 has 1 documents, fewer than cv=5"):
        blended = StackingVectorizer([("words", TfidfVectorizer())]).fit_transform(X, rare)
    assert blended.shape == (len(X), 5) and np.isfinite(blended).all()
    # every class rarer than the folds (20 Newsgroups' quick slice: 60 posts, 20 groups)
    few = make_topic_corpus(24, n_topics=8)
    with pytest.warns(UserWarning, match="every class has fewer than cv=5 documents: 3 folds"):
        out = StackingVectorizer([("words", TfidfVectorizer())]).fit_transform(*few)
    assert out.shape == (24, 8) and np.isfinite(out).all()


def test_same_seed_same_features_and_batch_invariance(corpus, bilm):
    X, y = corpus
    a = _stack(bilm, random_state=5).fit_transform(X, y)
    np.testing.assert_array_equal(a, _stack(bilm, random_state=5).fit_transform(X, y))
    assert not np.array_equal(a, _stack(bilm, random_state=6).fit_transform(X, y))
    check_transform_independent_of_batch(_stack(bilm), X, y)


def test_worker_processes_change_where_the_folds_fit_not_what_they_learn(corpus, bilm):
    X, y = corpus
    alone = _stack(bilm).fit_transform(X, y)
    parallel = _stack(bilm, n_jobs=2).fit_transform(X, y)
    np.testing.assert_allclose(parallel, alone, rtol=1e-5, atol=1e-6)


def test_scikit_learn_contract(corpus, bilm, tmp_path):
    X, y = corpus
    stack = _stack(bilm)
    cloned = clone(stack)
    assert cloned.blocks[0][1] is not stack.blocks[0][1]
    assert cloned.set_params(words__min_df=2, C=0.5) is cloned
    assert (cloned.get_params()["words__min_df"], cloned.C) == (2, 0.5)
    assert stack.blocks[0][1].min_df == 1 and stack.C is None
    with pytest.raises(NotFittedError):
        clone(clone(stack).fit(X, y)).transform(X)
    check_not_fitted(stack, X, y)
    check_bad_input(stack, X, y)
    check_accepts_iterables(stack, X, y)
    check_pickle_in_fresh_process(stack, X, y, tmp_path=tmp_path)
    check_safe_file_in_fresh_process(stack, X, y, tmp_path=tmp_path)
    frame = clone(stack).set_output(transform="pandas").fit_transform(X, y)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns)[:2] == ["blend__0", "blend__1"]


def test_grid_search_reaches_inside_the_blocks_and_shares_the_fitted_bilm(corpus, bilm):
    X, y = corpus
    pipe = make_pipeline(_stack(bilm), LogisticRegression())
    assert pipe.get_params()["stackingvectorizer__words__sublinear_tf"] is False
    search = GridSearchCV(pipe, {"stackingvectorizer__words__sublinear_tf": [False, True],
                                 "stackingvectorizer__elmo__pooling": ["mean", "max"]},
                          cv=2).fit(X, y)
    assert search.best_score_ > 0.5
    best = search.best_estimator_[0]
    assert best.blocks_[1][1].bilm_ is bilm  # never pretrained again per candidate
    replaced = clone(pipe).set_params(stackingvectorizer__words=CountVectorizer())
    assert isinstance(replaced[0].blocks[0][1], CountVectorizer)
    with pytest.raises(ValueError, match="neither its own nor of a block"):
        clone(pipe).set_params(stackingvectorizer__bag__size=3)
    default = StackingVectorizer().set_params(elmo__layer_mix="frozen")
    assert default.blocks[1][1].layer_mix == "frozen"
