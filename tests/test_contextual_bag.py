"""ElmoVectorizer(bag_size=...): the contextual bag of words after the pooled features."""

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from elmofeat import ElmoVectorizer
from elmofeat.elmo import bag as _bag, transform as _transform
from elmofeat.elmo.vectorizer import FEATURE_SCALE

from .test_elmo import _fresh_caches, bilm, corpus  # noqa: F401 (fixtures)

N_POOLED = 48  # the default concatenation: 3 layers of 2 x 8


def bagged(bilm, **params):
    return ElmoVectorizer(bilm, **{"bag_size": 12, "cache_dir": None, "random_state": 0,
                                   **params})


def test_the_bag_follows_the_pooled_features(corpus, bilm):
    X, _ = corpus
    plain = ElmoVectorizer(bilm, bag_size=None, cache_dir=None, random_state=0).fit(X)
    vec = bagged(bilm).fit(X)
    out = vec.transform(X)
    assert out.shape == (len(X), N_POOLED + 12) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, :N_POOLED], plain.transform(X))
    names = vec.get_feature_names_out()
    assert list(names[N_POOLED:]) == [f"elmo_bag{i}" for i in range(12)]
    assert names[0] == "elmo_mean0" and len(names) == out.shape[1]
    # every non-empty document's bag row has the bag's length; TF-IDF rows are never negative
    np.testing.assert_allclose(np.linalg.norm(out[:, N_POOLED:], axis=1),
                               vec.feature_scale_ * vec.bag_.scale, rtol=1e-5)
    assert (out[:, N_POOLED:] >= 0).all()
    assert vec.bag_.scale > 0 and "n_codes=12" in repr(vec.bag_)


def test_bag_counts_each_token_at_its_nearest_code(corpus, bilm):
    X, _ = corpus
    vec = bagged(bilm).fit(X)
    layers, offsets = bilm.embed_flat(X[:10])
    codes = vec.bag_.codes(layers)
    # every layer divided by its spread, as the mixes see them
    np.testing.assert_allclose(vec.bag_.layer_weights, 1 / vec.layer_scales_, rtol=1e-6)
    # brute force: the nearest centroid of each reduced unit vector
    flat = (layers / vec.layer_scales_[:, None]).reshape(len(layers), -1)
    unit = flat / np.linalg.norm(flat, axis=1, keepdims=True)
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
    np.testing.assert_allclose(vec.transform(X[:10])[:, N_POOLED:] / vec.feature_scale_, tf,
                               rtol=1e-5, atol=1e-7)


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


def test_an_unseeded_fit_draws_the_same_bag_and_a_seed_selects_another(corpus, bilm):
    # The label-free draws are seeded with random_state=None too (issue 71): the same
    # texts give the same features.
    X, _ = corpus
    a, b = (bagged(bilm, random_state=None).fit(X) for _ in range(2))
    np.testing.assert_array_equal(a.bag_.centroids, b.bag_.centroids)
    np.testing.assert_array_equal(a.transform(X[:5]), b.transform(X[:5]))
    c = bagged(bilm, random_state=7).fit(X)
    assert not np.array_equal(a.bag_.centroids, c.bag_.centroids)


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
    monkeypatch.setattr(_bag, "fit_bag", lambda layers, offsets, *a, **k: seen.append(
        offsets[-1]) or fit_bag(layers, offsets, *a, **k))
    vec = bagged(bilm).fit(X)
    assert seen == [200]  # the last document drawn is cut to fill the budget
    assert np.isfinite(vec.transform(X)).all()


def test_sample_documents_draws_whole_documents_then_cuts_the_last():
    lengths = [5, 0, 7, 3, 9, 4]
    asked = []

    def length_of(i):
        asked.append(i)
        return lengths[i]

    chosen, last, kept = _bag.sample_documents(length_of, len(lengths), 12, seed=0)
    assert 1 not in chosen and list(chosen) == sorted(chosen) and last in chosen
    taken = sum(lengths[i] for i in chosen if i != last) + kept
    assert taken == 12 and 0 < kept <= lengths[last]
    assert len(asked) < len(lengths)  # the budget is met before every document is read
    everything, last, kept = _bag.sample_documents(lengths.__getitem__, 6, 1000, seed=0)
    assert list(everything) == [0, 2, 3, 4, 5] and kept == lengths[last]
    assert _bag.sample_documents([0, 0].__getitem__, 2, 10, seed=0)[0].size == 0
    assert _bag.sample_documents(lengths.__getitem__, 6, 12, seed=1)[0].tolist() != chosen.tolist()


def test_supervised_mix_cross_fits_the_mix_not_the_label_free_bag(corpus, bilm):
    X, y = corpus
    vec = bagged(bilm, layer_mix="trainable", mix_epochs=2, cv=3)
    crossed = vec.fit_transform(X, y)
    refit = vec.transform(X)
    assert crossed.shape == refit.shape == (len(X), 16 + 12)
    np.testing.assert_allclose(crossed[:, 16:], refit[:, 16:], rtol=1e-5, atol=1e-6)
    assert not np.allclose(crossed[:, :16], refit[:, :16])  # out-of-fold mixes


def test_small_training_texts_get_a_smaller_codebook_and_empty_ones_an_error(bilm):
    small = ["a short text about the weather", "another one about the rain today"]
    vec = bagged(bilm, bag_size=500).fit(small)
    n_tokens = sum(len(t) for t in bilm.tokenize(small))
    assert vec.bag_.n_features == max(1, n_tokens // _bag.MIN_TOKENS_PER_CODE) < 500
    out = vec.transform(small + ["the rain"])
    assert out.shape == (3, N_POOLED + vec.bag_.n_features) and np.isfinite(out).all()
    assert len(vec.get_feature_names_out()) == out.shape[1]
    with pytest.raises(ValueError, match="needs training texts with at least one token"):
        _bag.fit_bag(np.zeros((0, 3, 16), np.float32), np.array([0, 0]), 12, seed=0)


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
    plain = ElmoVectorizer(bilm, bag_size=None, cache_dir=None, random_state=0).fit(X)
    state = plain.__getstate__()
    for key in ("bag_size", "bag_weight", "bag_", "feature_scale_"):
        del state[key]
    old = ElmoVectorizer.__new__(ElmoVectorizer)
    old.__setstate__(state)
    assert old.bag_ is None and old.get_params()["bag_size"] is None
    # ... and unscaled, as elmofeat gave them before it scaled its features
    assert old.feature_scale_ == 1.0 and plain.feature_scale_ == FEATURE_SCALE != 1.0
    np.testing.assert_allclose(old.transform(X[:7]) * FEATURE_SCALE, plain.transform(X[:7]),
                               rtol=1e-6)


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


@pytest.mark.parametrize("layer_weights", [None, (3.0, 0.25)])
def test_blocked_assignment_is_the_nearest_code_across_blocks_and_zero_rows(layer_weights):
    """Codes are assigned ``CODE_BLOCK`` tokens at a time, the layer weights, unit length
    and centring applied after the projection: still each token's nearest code (float64
    brute force on the weighted layers), a zero token included, wherever the block
    boundaries fall."""
    rng = np.random.default_rng(3)
    width, n_codes = 2 * 12, 40
    components = np.linalg.qr(rng.standard_normal((width, 6)))[0].T
    fitted = _bag.ContextualBag(rng.standard_normal(width) * 0.1, components,
                                rng.standard_normal((n_codes, 6)), None, 1.0, layer_weights)
    layers = rng.standard_normal((2 * _bag.CODE_BLOCK + 7, 2, 12)).astype(np.float32)
    layers[5] = 0.0
    weighted = layers if layer_weights is None else layers * np.array(layer_weights)[:, None]
    flat = weighted.reshape(len(layers), -1).astype(np.float64)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    unit = flat / np.where(norms > 0, norms, 1.0)
    reduced = (unit - fitted.centre) @ fitted.components.T
    expected = ((reduced[:, None, :] - fitted.centroids[None]) ** 2).sum(-1).argmin(1)
    np.testing.assert_array_equal(fitted.codes(layers), expected)
    np.testing.assert_array_equal(fitted.codes(layers[:3]), expected[:3])
    assert fitted.codes(layers[:0]).shape == (0,)
    # the derived arrays are rebuilt on load, not pickled
    state = fitted.__getstate__()
    assert not any(key.startswith("_") for key in state)
    restored = _bag.ContextualBag.__new__(_bag.ContextualBag)
    restored.__setstate__(state)
    np.testing.assert_array_equal(restored.codes(layers), expected)
    # a bag pickled before the layer weights existed assigns the layers as they come
    del state["layer_weights"]
    restored.__setstate__(state)
    assert restored.layer_weights is None
    if layer_weights is None:
        np.testing.assert_array_equal(restored.codes(layers), expected)


def test_layer_weights_make_the_codebook_blind_to_each_layer_s_scale():
    """A bag learned on layers each multiplied by a constant, with weights that undo the
    constants, is the bag of the layers as they were: the codebook's distances see every
    layer at the scale the weights give it, whatever the biLM's own scales (a biLM
    pretrained on a few thousand texts has LSTM layers several times its token layer's
    spread, which drowned the words in the codes)."""
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((6, 3, 8)) * 3
    layers = (centres[rng.integers(0, 6, 900)]
              + rng.standard_normal((900, 3, 8))).astype(np.float32)
    offsets = np.arange(0, 901, 30)
    scales = np.array([0.02, 1.0, 7.0], dtype=np.float32)
    plain = _bag.fit_bag(layers, offsets, 6, seed=0)
    undone = _bag.fit_bag(layers * scales[:, None], offsets, 6, seed=0,
                          layer_weights=1 / scales)
    np.testing.assert_array_equal(undone.codes(layers * scales[:, None]), plain.codes(layers))
    np.testing.assert_allclose(undone.centroids, plain.centroids, atol=1e-4)
    # unweighted, the scaled layers give other codes: the largest layer decides alone
    drowned = _bag.fit_bag(layers * scales[:, None], offsets, 6, seed=0)
    assert not np.array_equal(drowned.codes(layers * scales[:, None]), plain.codes(layers))


def test_seed_codes_are_kmeans_plus_plus_draws_from_the_sample():
    """The start of the codebook: sample points, drawn far from each other (k-means++):
    with five distant blobs, five codes land one in each (uniform draws would do so
    about 4% of the time); the same seed gives the same start, and a sample with fewer
    distinct points than codes still gives codes."""
    rng = np.random.default_rng(0)
    centres = 100.0 * np.eye(5, 8)
    points = (centres[rng.integers(5, size=600)] + rng.standard_normal((600, 8))).astype(
        np.float32)
    for seed in range(5):
        start = _bag._seed_codes(points, 5, 300, seed)
        assert start.dtype == np.float32 and start.shape == (5, 8)
        assert sorted(np.argmax(start, axis=1)) == [0, 1, 2, 3, 4]
        assert all((np.abs(points - code).sum(1) == 0).any() for code in start)
    np.testing.assert_array_equal(_bag._seed_codes(points, 5, 300, 1),
                                  _bag._seed_codes(points, 5, 300, 1))
    repeated = np.repeat(points[:2], 50, axis=0)
    assert _bag._seed_codes(repeated, 4, 100, 0).shape == (4, 8)


def test_principal_axes_come_from_every_kth_sample_token():
    """The PCA reads at most ``pca_tokens`` rows of the sample, every k-th one: its
    centre and axes are those of scikit-learn's PCA of those unit rows (axes up to
    rounding, signs as ``svd_flip`` chooses them); with ``pca_tokens`` at least the
    sample's size it reads every row."""
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(7)
    # distinct variances along 6 directions: the axes are well separated
    layers = (rng.standard_normal((1003, 6)) * np.arange(6, 0, -1)
              @ np.linalg.qr(rng.standard_normal((3 * 8, 6)))[0].T).astype(np.float32)
    layers = layers.reshape(1003, 3, 8)
    offsets = np.array([0, 400, 1003])
    flat = layers.reshape(len(layers), -1).astype(np.float64)
    unit = flat / np.linalg.norm(flat, axis=1, keepdims=True)
    for pca_tokens, rows in ((100, unit[::11]), (1003, unit), (5000, unit)):
        fitted = _bag.fit_bag(layers, offsets, 4, seed=0, n_components=3,
                              pca_tokens=pca_tokens)
        reference = PCA(3, svd_solver="full").fit(rows)
        np.testing.assert_allclose(fitted.centre, reference.mean_, atol=1e-5)
        np.testing.assert_allclose(fitted.components, reference.components_, atol=1e-4)
