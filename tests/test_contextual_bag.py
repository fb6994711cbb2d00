"""ElmoVectorizer(bag_size=...): the contextual bag of words after the pooled features."""

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from elmofeat import ElmoVectorizer
from elmofeat.elmo import bag as _bag, transform as _transform

from .test_elmo import _fresh_caches, bilm, corpus  # noqa: F401 (fixtures)

N_POOLED = 48  # the default concatenation: 3 layers of 2 x 8


def bagged(bilm, **params):
    return ElmoVectorizer(bilm, **{"bag_size": 12, "cache_dir": None, "random_state": 0,
                                   **params})


def test_the_bag_follows_the_pooled_features(corpus, bilm):
    X, _ = corpus
    plain = ElmoVectorizer(bilm, cache_dir=None, random_state=0).fit(X)
    vec = bagged(bilm).fit(X)
    out = vec.transform(X)
    assert out.shape == (len(X), N_POOLED + 12) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, :N_POOLED], plain.transform(X))
    names = vec.get_feature_names_out()
    assert list(names[N_POOLED:]) == [f"elmo_bag{i}" for i in range(12)]
    assert names[0] == "elmo_mean0" and len(names) == out.shape[1]
    # every non-empty document's bag row has the bag's length; TF-IDF rows are never negative
    np.testing.assert_allclose(np.linalg.norm(out[:, N_POOLED:], axis=1), vec.bag_.scale, rtol=1e-5)
    assert (out[:, N_POOLED:] >= 0).all()
    assert vec.bag_.scale > 0 and "n_codes=12" in repr(vec.bag_)


def test_bag_counts_each_token_at_its_nearest_code(corpus, bilm):
    X, _ = corpus
    vec = bagged(bilm).fit(X)
    layers, offsets = bilm.embed_flat(X[:10])
    codes = vec.bag_.codes(layers)
    # brute force: the nearest centroid of each reduced unit vector
    unit = layers.reshape(len(layers), -1) / np.linalg.norm(layers.reshape(len(layers), -1),
                                                            axis=1, keepdims=True)
    reduced = (unit - vec.bag_.centre) @ vec.bag_.components.T
    distances = ((reduced[:, None, :] - vec.bag_.centroids[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(codes, distances.argmin(1))
    counts = vec.bag_.counts(layers, offsets).toarray()
    np.testing.assert_array_equal(counts.sum(1), np.diff(offsets))
    expected = np.stack([np.bincount(codes[a:b], minlength=12)
                         for a, b in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_array_equal(counts, expected)
    # sublinear TF times the IDF of the sample documents, rows of length `scale`
    tf = np.where(counts > 0, 1 + np.log(np.maximum(counts, 1)), 0) * vec.bag_.tfidf.idf_
    tf = vec.bag_.scale * tf / np.linalg.norm(tf, axis=1, keepdims=True)
    np.testing.assert_allclose(vec.transform(X[:10])[:, N_POOLED:], tf, rtol=1e-5, atol=1e-7)


def test_bag_weight_scales_the_rows_and_empty_documents_stay_zero(corpus, bilm):
    X, _ = corpus
    one, two = bagged(bilm).fit(X), bagged(bilm, bag_weight=2.0).fit(X)
    assert two.bag_.scale == pytest.approx(2 * one.bag_.scale)
    np.testing.assert_allclose(two.transform(X[:5])[:, N_POOLED:],
                               2 * one.transform(X[:5])[:, N_POOLED:], rtol=1e-6)
    empty = one.transform(["", "   "])
    assert empty.shape == (2, N_POOLED + 12) and not empty.any()


def test_features_depend_on_the_document_alone_and_on_the_seed(corpus, bilm):
    X, _ = corpus
    vec = bagged(bilm).fit(X)
    together = vec.transform(X[:30])
    alone = np.concatenate([vec.transform([doc]) for doc in X[:30]])
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_array_equal(bagged(bilm).fit(X).transform(X[:30]), together)
    other = bagged(bilm, random_state=1).fit(X)
    assert not np.array_equal(other.bag_.centroids, vec.bag_.centroids)


def test_codes_shared_among_threads_are_the_codes_of_one(corpus, bilm):
    X, _ = corpus
    vec = bagged(bilm, n_threads=1).fit(X)
    one = vec.transform(X)
    many = vec.set_params(n_threads=3).transform(X)  # documents shared among 3 threads
    np.testing.assert_array_equal(one, many)


def test_a_long_document_read_in_pieces_gets_the_same_bag(corpus, bilm, monkeypatch):
    X, _ = corpus
    vec = bagged(bilm, pooling="meanmax").fit(X)
    long_doc = " ".join(X * 3)
    whole = vec.transform([long_doc])
    monkeypatch.setattr(_transform, "TOKEN_BUDGET", bilm.max_len)  # streamed, window by window
    streamed = vec.transform([long_doc])
    np.testing.assert_allclose(streamed, whole, rtol=1e-5, atol=1e-6)
    assert whole.shape == (1, 2 * N_POOLED + 12)


def test_the_codebook_learns_from_a_bounded_sample(corpus, bilm, monkeypatch):
    X, _ = corpus
    monkeypatch.setattr(_bag, "SAMPLE_TOKENS", 200)
    seen = []
    fit_bag = _bag.fit_bag
    monkeypatch.setattr(_bag, "fit_bag", lambda layers, offsets, *a: seen.append(
        offsets[-1]) or fit_bag(layers, offsets, *a))
    vec = bagged(bilm).fit(X)
    assert seen == [200]  # the last document drawn is cut to fill the budget
    assert np.isfinite(vec.transform(X)).all()


def test_sample_documents_draws_whole_documents_then_cuts_the_last():
    lengths = [5, 0, 7, 3, 9, 4]
    chosen, last, kept = _bag.sample_documents(lengths, 12, seed=0)
    assert 1 not in chosen and list(chosen) == sorted(chosen) and last in chosen
    taken = sum(lengths[i] for i in chosen if i != last) + kept
    assert taken == 12 and 0 < kept <= lengths[last]
    everything, last, kept = _bag.sample_documents(lengths, 1000, seed=0)
    assert list(everything) == [0, 2, 3, 4, 5] and kept == lengths[last]
    assert _bag.sample_documents([0, 0], 10, seed=0)[0].size == 0


def test_supervised_mix_cross_fits_the_mix_not_the_label_free_bag(corpus, bilm):
    X, y = corpus
    vec = bagged(bilm, layer_mix="trainable", mix_epochs=2, cv=3)
    crossed = vec.fit_transform(X, y)
    refit = vec.transform(X)
    assert crossed.shape == refit.shape == (len(X), 16 + 12)
    np.testing.assert_allclose(crossed[:, 16:], refit[:, 16:], rtol=1e-5, atol=1e-6)
    assert not np.allclose(crossed[:, :16], refit[:, :16])  # out-of-fold mixes


def test_too_few_tokens_for_the_codebook_is_said_plainly(bilm):
    with pytest.raises(ValueError, match="bag_size=500 codes need at least as many tokens"):
        bagged(bilm, bag_size=500).fit(["a short text", "another one"])


@pytest.mark.parametrize("params, error, match", [
    ({"bag_size": 0}, ValueError, "'bag_size' parameter"),
    ({"bag_size": 2.5}, TypeError, "'bag_size' parameter"),
    ({"bag_weight": 0.0}, ValueError, "'bag_weight' parameter"),
    ({"bag_weight": float("nan")}, ValueError, "'bag_weight' parameter"),
    ({"bag_weight": float("inf")}, ValueError, "'bag_weight' parameter"),
    ({"bag_weight": "1"}, TypeError, "'bag_weight' parameter"),
])
def test_bad_bag_parameters(corpus, bilm, params, error, match):
    X, y = corpus
    with pytest.raises(error, match=match):
        bagged(bilm, **params).fit(X, y)


def test_pickles_keep_the_bag_and_old_pickles_keep_their_features(corpus, bilm, tmp_path):
    X, _ = corpus
    vec = bagged(bilm).fit(X)
    joblib.dump(vec, tmp_path / "vec.joblib")
    loaded = joblib.load(tmp_path / "vec.joblib")
    np.testing.assert_array_equal(loaded.transform(X[:7]), vec.transform(X[:7]))
    assert clone(loaded).get_params()["bag_size"] == 12
    # a vectorizer pickled before the bag existed: no bag, the same features as before
    plain = ElmoVectorizer(bilm, cache_dir=None, random_state=0).fit(X)
    state = plain.__getstate__()
    for key in ("bag_size", "bag_weight", "bag_"):
        del state[key]
    old = ElmoVectorizer.__new__(ElmoVectorizer)
    old.__setstate__(state)
    assert old.bag_ is None and old.get_params()["bag_size"] is None
    np.testing.assert_array_equal(old.transform(X[:7]), plain.transform(X[:7]))


def test_set_output_names_the_bag_columns(corpus, bilm):
    import pandas as pd

    X, _ = corpus
    frame = bagged(bilm).set_output(transform="pandas").fit(X).transform(X[:3])
    assert isinstance(frame, pd.DataFrame) and list(frame.columns[-2:]) == ["elmo_bag10",
                                                                           "elmo_bag11"]


def test_bag_counts_are_sparse_rows_per_document(corpus, bilm):
    vec = bagged(bilm).fit(corpus[0])
    layers, offsets = bilm.embed_flat(["", corpus[0][0]])
    counts = vec.bag_.counts(layers, offsets)
    assert sp.issparse(counts) and counts.shape == (2, 12)
    assert counts[0].nnz == 0 and counts[1].sum() == offsets[2] - offsets[1]
