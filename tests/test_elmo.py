import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline

import elmofeat
from elmofeat import BiLM
from elmofeat.elmo import caches as _bilm_cache
from elmofeat.elmo.vectorizer import FEATURE_SCALE

from .estimator_checks import make_topic_corpus


def ElmoVectorizer(*args, **params):
    """``ElmoVectorizer`` without its contextual bag unless a test asks for one: these
    tests are about the mixes and the pooled features (the bag's own are in
    test_contextual_bag.py, the default's below)."""
    return elmofeat.ElmoVectorizer(*args, **{"bag_size": None, **params})

SMALL_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus(120)


@pytest.fixture(scope="module")
def bilm(corpus):
    return BiLM(**SMALL_BILM).fit(corpus[0])


@pytest.fixture(autouse=True)
def _fresh_caches():
    _bilm_cache.BILMS.clear()
    _bilm_cache.REPRESENTATIONS.clear()
    yield


def test_frozen_mix_weights(corpus, bilm):
    X, _ = corpus
    uniform = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(X)
    np.testing.assert_allclose(uniform.layer_weights_, [1 / 3] * 3)
    assert uniform.gamma_ == 1.0
    given = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=[0.0, 0.0, 1.0], scale_layers=False,
                           cache_dir=None).fit(X)
    np.testing.assert_array_equal(given.layer_scales_, [1, 1, 1])
    layers = bilm.embed([X[0]])[0]
    np.testing.assert_allclose(given.transform([X[0]])[0] / FEATURE_SCALE, layers[:, 2].mean(0),
                               rtol=1e-5, atol=1e-6)
    a = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights="random", random_state=3, cache_dir=None).fit(X)
    b = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights="random", random_state=3, cache_dir=None).fit(X)
    np.testing.assert_array_equal(a.layer_weights_, b.layer_weights_)
    assert ((a.layer_weights_ >= 0.5) & (a.layer_weights_ <= 1.0)).all()
    with pytest.raises(ValueError, match="one per layer"):
        ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=[1, 2], cache_dir=None).fit(X)
    with pytest.raises(ValueError, match="all zero"):
        ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=[0, 0, 0], cache_dir=None).fit(X)
    # finite in float64, inf in the float32 features: refused, not NaN/inf features
    with pytest.raises(ValueError, match="at most 1e\\+06 in magnitude"):
        ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=[1e39, 1, 1], cache_dir=None).fit(X)
    large = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=[1e6, 1, 1], cache_dir=None).fit(X)
    assert np.isfinite(large.transform(X)).all()


def test_frozen_mix_scales_each_layer_to_unit_spread(corpus, bilm):
    X, _ = corpus
    layers = np.stack([d.mean(0) for d in bilm.embed(X)])  # (n_documents, 3, dim)
    spread = np.sqrt(layers.var(axis=0).mean(axis=-1))
    vec = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None, random_state=0).fit(X)
    np.testing.assert_allclose(vec.layer_scales_, spread, rtol=1e-4)  # 119 < 2,048: every document
    np.testing.assert_allclose(vec.layer_weights_, [1 / 3] * 3)  # the weights keep their meaning
    expected = FEATURE_SCALE * sum(layers[:, j] / spread[j] for j in range(3)) / 3
    np.testing.assert_allclose(vec.transform(X), expected, rtol=1e-4, atol=1e-5)
    # Selecting one layer: the features are that layer, divided by its spread.
    only = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=[0, 1, 0],
                          cache_dir=None).fit(X).transform(X)
    np.testing.assert_allclose(np.sqrt(only.var(axis=0).mean()), FEATURE_SCALE, rtol=1e-4)
    # Every mix divides the layers by the same spreads; the supervised ones learn shares.
    trainable = ElmoVectorizer(bilm, layer_mix="trainable", mix_epochs=1, cache_dir=None).fit(X, corpus[1])
    np.testing.assert_allclose(trainable.layer_scales_, spread, rtol=1e-4)
    np.testing.assert_allclose(trainable.layer_weights_.sum(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(trainable.mix_.weights, trainable.layer_weights_ / spread,
                               rtol=1e-4)
    # The spread is measured on a seeded sample of at most 2,048 documents; blank ones are left out.
    many = (X * 20)[:2500] + [""] * 10
    a = ElmoVectorizer(bilm, cache_dir=None, random_state=1).fit(many).layer_scales_
    b = ElmoVectorizer(bilm, cache_dir=None, random_state=1).fit(many).layer_scales_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, spread, rtol=0.05)
    with pytest.raises(TypeError, match="'scale_layers' parameter of ElmoVectorizer must be an instance of 'bool'"):
        ElmoVectorizer(bilm, scale_layers="yes", cache_dir=None).fit(X)


def test_trainable_mix_learns_weights_from_labels(corpus, bilm):
    X, y = corpus
    vec = ElmoVectorizer(bilm, layer_mix="trainable", mix_epochs=5, random_state=0, cache_dir=None).fit(X, y)
    assert vec.layer_weights_.shape == (3,)
    np.testing.assert_allclose(vec.layer_weights_.sum(), 1.0, rtol=1e-5)
    assert not np.allclose(vec.layer_weights_, 1 / 3)  # moved away from the start
    assert vec.gamma_ != 1.0
    assert vec.transform(X[:4]).shape == (4, 16)


def test_mlp_mix_width_and_features(corpus, bilm):
    X, y = corpus
    vec = ElmoVectorizer(bilm, layer_mix="mlp", mlp_dim=5, pooling="meanmax", mix_epochs=2,
                         random_state=0, cache_dir=None).fit(X, y)
    out = vec.transform(X[:3])
    assert out.shape == (3, 10) and vec.layer_weights_ is None and vec.gamma_ is None
    assert list(vec.get_feature_names_out()[:2]) == ["elmo_mean0", "elmo_mean1"]


@pytest.mark.parametrize("mix", ["trainable", "mlp"])
def test_supervised_mix_without_labels_says_what_to_do(corpus, bilm, mix):
    with pytest.raises(ValueError, match="pass y to fit.*layer_mix='concat'"):
        ElmoVectorizer(bilm, layer_mix=mix, cache_dir=None).fit(corpus[0])


def test_fit_transform_is_cross_fitted_like_target_encoder(corpus, bilm):
    X, y = corpus
    vec = ElmoVectorizer(bilm, layer_mix="mlp", mlp_dim=6, mix_epochs=3, cv=3, random_state=0, cache_dir=None)
    crossed = vec.fit_transform(X, y)
    plain = vec.transform(X)
    assert crossed.shape == plain.shape
    assert not np.allclose(crossed, plain)  # each fold's features come from another mix
    refit = clone(vec).fit(X, y).transform(X)
    np.testing.assert_allclose(refit, plain, rtol=1e-5, atol=1e-6)  # fit uses all of X
    frozen = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None)
    np.testing.assert_allclose(frozen.fit_transform(X), frozen.transform(X), rtol=1e-6)


def test_fitted_bilm_is_shared_by_clones_and_never_refitted(corpus, bilm, monkeypatch):
    X, y = corpus
    calls = []
    monkeypatch.setattr(BiLM, "fit", lambda self, *a, **k: calls.append(1) or self)
    vec = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None)
    twin = clone(vec)
    assert twin.bilm is bilm
    twin.fit(X)
    assert twin.bilm_ is bilm and calls == []


def test_unfitted_bilm_is_copied_then_fitted(corpus):
    X, _ = corpus
    template = BiLM(**SMALL_BILM)
    vec = ElmoVectorizer(template, layer_mix="frozen", cache_dir=None).fit(X)
    assert not hasattr(template, "language_model_")
    assert vec.bilm_ is not template and hasattr(vec.bilm_, "language_model_")
    assert clone(vec).bilm is not template  # a clone of an unfitted biLM is a fresh copy


def test_grid_search_pretrains_once_per_fold(corpus, tmp_path):
    X, y = corpus
    pipe = Pipeline([
        ("elmo", ElmoVectorizer(BiLM(**SMALL_BILM), mix_epochs=2, cv=2, cache_dir=tmp_path, random_state=0)),
        ("clf", LogisticRegression(max_iter=300)),
    ])
    for n_jobs in (1, 2):
        for path in tmp_path.glob("*"):
            path.unlink()
        _bilm_cache.BILMS.clear()
        search = GridSearchCV(pipe, {"elmo__layer_mix": ["trainable", "frozen", "mlp"]}, cv=3, n_jobs=n_jobs)
        search.fit(X, y)
        log = [json.loads(line) for line in (tmp_path / "pretrain.log").read_text().splitlines()]
        # 3 folds + the final refit on all of X; never once per candidate.
        assert len(log) == 4, log
        assert sorted(entry["documents"] for entry in log) == [80, 80, 80, 120]
        assert search.best_params_["elmo__layer_mix"] in ("trainable", "frozen", "mlp")


def test_grid_search_with_fitted_bilm_never_pretrains(corpus, bilm, tmp_path):
    X, y = corpus
    pipe = Pipeline([("elmo", ElmoVectorizer(bilm, mix_epochs=2, cv=2, cache_dir=tmp_path)),
                     ("clf", LogisticRegression(max_iter=300))])
    GridSearchCV(pipe, {"elmo__layer_mix": ["trainable", "frozen"]}, cv=2, n_jobs=2).fit(X, y)
    assert not (tmp_path / "pretrain.log").exists()


def test_layer_representations_are_reused_across_candidates(corpus, bilm):
    X, y = corpus
    before = _bilm_cache.REPRESENTATIONS.misses
    unscaled = ElmoVectorizer(bilm, scale_layers=False, cache_dir=None).fit(X)
    assert _bilm_cache.REPRESENTATIONS.misses == before  # nothing to measure: no biLM run
    ElmoVectorizer(bilm, cache_dir=None).fit(X)  # measures the layers' spread on X
    misses = _bilm_cache.REPRESENTATIONS.misses
    assert misses > before
    unscaled.transform(X)
    ElmoVectorizer(bilm, layer_mix="trainable", mix_epochs=1, cache_dir=None).fit(X, y)
    assert _bilm_cache.REPRESENTATIONS.misses == misses  # all from the cache
    assert _bilm_cache.REPRESENTATIONS.hits >= len(X)


def test_a_full_cache_still_answers_with_every_document(corpus, bilm):
    # Storing the new documents' layers evicts old entries; those this call takes from
    # the cache must be read before (a fit after a partly cached one failed with KeyError).
    X, _ = corpus
    expected, expected_offsets = bilm.embed_flat(X[:40])
    cache = _bilm_cache.RepresentationCache(max_bytes=expected[:expected_offsets[20]].nbytes)
    cache.embed(bilm, X[:20])  # fills the cache exactly
    layers, offsets = cache.embed(bilm, X[:40])  # 20 cached, 20 new that evict them
    np.testing.assert_array_equal(offsets, expected_offsets)
    np.testing.assert_allclose(layers, expected, rtol=1e-5, atol=1e-6)
    assert cache.hits == 20 and cache.misses == 40
    # Nothing cached: the computed array itself comes back (no second copy at the peak).
    fresh, _ = _bilm_cache.RepresentationCache(max_bytes=0).embed(bilm, X[:5])
    assert fresh.base is None or fresh.flags.owndata or fresh.base.nbytes == fresh.nbytes


def test_hundred_thousand_word_document_is_windowed(corpus, bilm):
    X, _ = corpus
    vec = ElmoVectorizer(bilm, layer_mix="frozen", pooling="meanmax", cache_dir=None).fit(X)
    words = " ".join(X).split()
    long_doc = " ".join((words * (100_000 // len(words) + 1))[:100_000])
    out = vec.transform([long_doc, X[0]])
    assert out.shape == (2, 32) and np.isfinite(out).all()
    np.testing.assert_allclose(out[1], vec.transform([X[0]])[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("params, error, match", [
    ({"layer_mix": "attention"}, ValueError, "layer_mix"),
    ({"pooling": "median"}, ValueError, "pooling"),
    ({"mlp_dim": 0}, ValueError, "mlp_dim"),
    ({"device": "tpu"}, ValueError, "'device' parameter .* 'auto' or a torch device such as"),
    ({"device": 3}, TypeError, "'device' parameter .* Got 3 instead"),
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"mix_batch_size": 0}, ValueError, "mix_batch_size"),
    ({"n_jobs": 0}, ValueError, "'n_jobs' parameter .* Got 0 instead"),
    ({"n_threads": 0}, ValueError, "'n_threads' parameter .* Got 0 instead"),
    ({"n_threads": True}, TypeError, "'n_threads' parameter .* Got True instead"),
    ({"n_threads": object()}, TypeError, "'n_threads' parameter of ElmoVectorizer"),
    ({"n_jobs": 1.5}, ValueError, "'n_jobs' parameter .* Got 1.5 instead"),
    ({"bilm": 3}, TypeError, "'bilm' parameter .* instance of 'elmofeat.bilm.estimator.BiLM'"),
    ({"bilm": "elmo.pt"}, ValueError, "'elmo.pt' is neither a registered pretrained model"),
    ({"adapt_epochs": -1}, ValueError, "'adapt_epochs' parameter"),
    ({"layer_mix": "trainable", "mix_weights": [1, 1, 1]}, ValueError, "mix_weights"),
    ({"cache_dir": 123}, TypeError, "'cache_dir' parameter .* Got 123 instead"),
    ({"mix_learning_rate": float("nan")}, ValueError, "'mix_learning_rate' parameter .* Got nan"),
])
def test_bad_parameters(corpus, bilm, params, error, match):
    X, y = corpus
    with pytest.raises(error, match=match):
        ElmoVectorizer(**{"bilm": bilm, "cache_dir": None, **params}).fit(X, y)


def test_label_length_mismatch(corpus, bilm):
    X, y = corpus
    for mix in ("frozen", "trainable"):  # the frozen mix ignores y, but not a wrong one
        with pytest.raises(ValueError, match="has 119 labels"):
            ElmoVectorizer(bilm, layer_mix=mix, cache_dir=None).fit(X, y[:-1])


def test_default_vectorizer_needs_no_labels(corpus, bilm):
    from sklearn.cluster import KMeans
    from sklearn.pipeline import make_pipeline

    X, _ = corpus
    default = elmofeat.ElmoVectorizer()
    assert default.layer_mix == "concat" and default.bag_size == 2000
    assert not default.__sklearn_tags__().target_tags.required
    # the default's features: the pooled ones, then the bag (fewer codes on few tokens)
    bagged = elmofeat.ElmoVectorizer(bilm, cache_dir=None, random_state=0).fit(X)
    n_tokens = sum(len(t) for t in bilm.tokenize(X))
    assert bagged.bag_.n_features == min(2000, n_tokens // 8)
    assert bagged.transform(X[:3]).shape == (3, 3 * bilm.output_dim_ + bagged.bag_.n_features)
    labels = make_pipeline(ElmoVectorizer(bilm, cache_dir=None),
                           KMeans(n_clusters=4, n_init=2, random_state=0)).fit_predict(X)
    assert len(set(labels)) == 4
    # The concatenated layers, each block a third of a scaled layer: the blocks add up
    # to the frozen mix's features.
    concat = ElmoVectorizer(bilm, cache_dir=None).fit(X)
    frozen = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(X)
    features = concat.transform(X[:5])
    assert features.shape == (5, 3 * bilm.output_dim_)
    assert len(concat.get_feature_names_out()) == features.shape[1]
    np.testing.assert_allclose(features.reshape(5, 3, -1).sum(1), frozen.transform(X[:5]),
                               rtol=1e-4, atol=1e-5)


def test_cross_fitted_mlp_features_stay_in_one_space(corpus, bilm):
    # Out-of-fold features (from one MLP per fold) and transform's features (from the
    # final MLP) must share one feature space, column by column, or a classifier trained
    # on the former is useless on the latter. Without the alignment, some columns are
    # uncorrelated (minimum correlation about 0 here).
    X, y = corpus
    vec = ElmoVectorizer(bilm, layer_mix="mlp", mlp_dim=16, mix_epochs=5, cv=3, random_state=0,
                         cache_dir=None)
    crossed, plain = vec.fit_transform(X, y), vec.transform(X)
    # Columns of (nearly) dead ReLU units carry no signal and are left out: the spread
    # of a kept column is at least 5% of the median column's.
    spread = plain.std(axis=0)
    live = spread > 0.05 * np.median(spread)
    correlations = [np.corrcoef(crossed[:, j], plain[:, j])[0, 1] for j in np.flatnonzero(live)
                    if crossed[:, j].std() > 0]
    assert len(correlations) >= 8
    assert np.mean(correlations) > 0.85 and np.min(correlations) > 0.5


def test_parallel_transform_equals_sequential(corpus, bilm):
    import joblib

    documents = (corpus[0] * 10)[:1100]  # enough for two parts of at least 512 documents
    vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(documents)
    expected = vectorizer.transform(documents)
    parallel = vectorizer.set_params(n_jobs=2).transform(documents)
    np.testing.assert_allclose(parallel, expected, rtol=1e-4, atol=1e-5)
    # The joblib context decides when n_jobs is None (as on a Dask or Ray cluster).
    with joblib.parallel_config(backend="loky", n_jobs=2):
        np.testing.assert_allclose(vectorizer.set_params(n_jobs=None).transform(documents),
                                   expected, rtol=1e-4, atol=1e-5)


def test_parallel_workers_get_a_share_of_the_threads(corpus, bilm, monkeypatch):

    from elmofeat.elmo import transform as _elmo_transform
    from elmofeat.runtime import parallel as _parallel

    seen = []
    real = _elmo_transform.ThreadPolicy

    def spy(n_threads):
        seen.append(n_threads)
        return real(n_threads)

    documents = (corpus[0] * 10)[:1100]
    vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", n_jobs=2, cache_dir=None).fit(documents)
    monkeypatch.setattr(_elmo_transform, "ThreadPolicy", spy)
    monkeypatch.setattr(_parallel, "cpu_count", lambda: 8)
    import joblib

    with joblib.parallel_config(backend="threading"):  # the spy must run in this process
        vectorizer.transform(documents)
    assert seen == [4, 4]


# ------------------------------------------------------- unlabelled documents (y == -1)


@pytest.mark.parametrize("mix", ["trainable", "mlp"])
def test_mix_learns_only_from_labelled_documents(corpus, bilm, mix):
    X, y = corpus
    partial = y.copy()
    partial[::3] = -1
    labelled = np.flatnonzero(partial != -1)
    # The layer scales are measured on every text (they need no label), so they would
    # differ here; fixed scales isolate what the labels teach.
    params = dict(layer_mix=mix, mlp_dim=6, mix_epochs=2, random_state=0, cache_dir=None,
                  scale_layers=False)
    with_unlabelled = ElmoVectorizer(bilm, **params).fit(X, partial)
    only_labelled = ElmoVectorizer(bilm, **params).fit([X[i] for i in labelled], y[labelled])
    for key, value in vars(only_labelled.mix_).items():
        np.testing.assert_allclose(getattr(with_unlabelled.mix_, key), value, rtol=1e-5, atol=1e-6)
    # Unlabelled documents are out of sample for the full mix: fit_transform gives them
    # exactly the features transform gives; labelled ones are cross-fitted.
    crossed = ElmoVectorizer(bilm, **params).fit_transform(X, partial)
    plain = with_unlabelled.transform(X)
    unlabelled = np.flatnonzero(partial == -1)
    np.testing.assert_allclose(crossed[unlabelled], plain[unlabelled], rtol=1e-5, atol=1e-6)
    assert not np.allclose(crossed[labelled], plain[labelled])


def test_self_training_pipeline_pretrains_on_every_text(corpus):
    from sklearn.semi_supervised import SelfTrainingClassifier

    X, y = corpus
    X = list(X) + ["zebra unicorn narwhal zebra unicorn narwhal ."] * 4  # only in unlabelled texts
    y = np.concatenate([y, [-1] * 4])
    y[: len(y) // 2] = -1
    pipe = Pipeline([("elmo", ElmoVectorizer(BiLM(**SMALL_BILM), layer_mix="trainable",
                                             mix_epochs=2, random_state=0,
                                             cache_dir=None)),
                     ("clf", SelfTrainingClassifier(LogisticRegression(max_iter=500),
                                                            criterion="k_best", k_best=10))])
    pipe.fit(X, y)
    assert "zebra" in pipe["elmo"].bilm_.vocabulary_.tokens
    assert set(pipe.predict(X[:8])) <= set(range(4))
    # Self-training labelled some of the unlabelled documents from their features.
    assert (pipe["clf"].transduction_ != -1).sum() > (y != -1).sum()


@pytest.mark.parametrize("labels, match", [
    (lambda y: np.full(len(y), -1), "every document is unlabelled"),
    (lambda y: np.where(np.arange(len(y)) % 2, -1, 0), "single class"),
    (lambda y: np.where(np.arange(len(y)) == 7, np.nan, y.astype(float)), r"y\[7\] is missing"),
    (lambda y: np.array([None if i == 3 else str(v) for i, v in enumerate(y)], dtype=object),
     r"y\[3\] is missing \(None\)"),
    (lambda y: np.array([-1 if i < 5 else "a" if i % 2 else 2 for i in range(len(y))], dtype=object),
     "mixes label types"),
    (lambda y: y[:-1], "has 119 labels"),
])
def test_bad_labels_are_rejected_before_pretraining(corpus, labels, match, monkeypatch):
    X, y = corpus
    monkeypatch.setattr(BiLM, "fit", lambda *a, **k: pytest.fail("pretrained before checking y"))
    with pytest.raises(ValueError, match=match):
        ElmoVectorizer(BiLM(**SMALL_BILM), layer_mix="trainable", cache_dir=None).fit(X, labels(y))


@pytest.mark.parametrize("mix", ["trainable", "mlp"])
@pytest.mark.parametrize("labelled, cv, match", [
    (2, 5, "y labels only 2 of them: label at least 5"),
    (3, 5, "y labels only 3 of them"),
    (4, StratifiedKFold(5), "cannot split the 4 labelled documents"),
])
def test_too_few_labels_for_the_folds_are_refused_before_pretraining(corpus, mix, labelled, cv,
                                                                     match, monkeypatch):
    # The probe's semi-supervised case: 2 labels among 120 documents failed inside
    # scikit-learn ("n_samples=2"), after the biLM had pretrained.
    X, y = corpus
    partial = np.full(len(y), -1)
    partial[:labelled] = np.arange(labelled) % 2
    monkeypatch.setattr(BiLM, "fit", lambda *a, **k: pytest.fail("pretrained before checking cv"))
    vectorizer = ElmoVectorizer(BiLM(**SMALL_BILM), layer_mix=mix, cv=cv, cache_dir=None)
    with pytest.raises(ValueError, match=match):
        vectorizer.fit_transform(X, partial)


def test_string_labels_with_unlabelled_documents(corpus, bilm):
    X, y = corpus
    names = np.array(["world", "sports", "business", "science"], dtype=object)[y]
    names[:10] = -1
    vec = ElmoVectorizer(bilm, layer_mix="trainable", mix_epochs=2, random_state=0, cache_dir=None)
    out = vec.fit_transform(X, names)
    assert out.shape == (len(X), 16) and np.isfinite(out).all()


def test_continuous_targets_keep_minus_one_as_a_value(corpus, bilm):
    from elmofeat.elmo.labels import check_targets

    targets = check_targets(np.linspace(-1, 1, 9), 9)
    assert not targets.classification and len(targets.labelled) == 9


def test_bilm_pretrained_on_a_separate_unlabelled_corpus_is_reused(corpus, tmp_path, monkeypatch):
    X, y = corpus
    unlabelled = make_topic_corpus(200, seed=1)[0]  # other texts of the same domain, no labels
    bilm = BiLM(**SMALL_BILM).fit(unlabelled)
    bilm.save(tmp_path / "bilm.pt")
    reloaded = BiLM.load(tmp_path / "bilm.pt")
    monkeypatch.setattr(BiLM, "fit", lambda *a, **k: pytest.fail("the biLM was pretrained again"))
    pipe = Pipeline([("elmo", ElmoVectorizer(reloaded, layer_mix="trainable", mix_epochs=3,
                                             random_state=0, cache_dir=None)),
                     ("clf", LogisticRegression(max_iter=500))])
    pipe.fit(X[:80], y[:80])
    assert pipe["elmo"].bilm_ is reloaded
    assert pipe["elmo"].bilm_.vocabulary_.tokens == bilm.vocabulary_.tokens
    assert pipe.score(X[80:], y[80:]) > 0.5


@pytest.mark.parametrize("mix", ["frozen", "trainable", "mlp"])
@pytest.mark.parametrize("pooling", ["mean", "max", "meanmax"])
def test_a_chunk_of_blank_documents_gives_zero_vectors(corpus, bilm, mix, pooling):
    # Every document of the chunk has no token at all (issue 11: this used to crash).
    X, y = corpus
    vec = ElmoVectorizer(bilm, layer_mix=mix, pooling=pooling, mlp_dim=4, mix_epochs=1,
                         cache_dir=None, random_state=0).fit(X, y)
    out = vec.transform(["", "  ", "\n"])
    assert out.shape == (3, len(vec.get_feature_names_out()))
    np.testing.assert_array_equal(out, 0)
    blank_fit = ElmoVectorizer(bilm, layer_mix=mix, pooling=pooling, mlp_dim=4, mix_epochs=1,
                               cache_dir=None, cv=2, random_state=0)
    crossed = blank_fit.fit_transform(["", " "] * 4 + list(X[:8]), np.r_[[0, 1] * 4, y[:8]])
    assert np.isfinite(crossed).all()
    np.testing.assert_array_equal(crossed[:8], 0)


def test_parallel_transform_of_blank_documents(corpus, bilm):
    vec = ElmoVectorizer(bilm, cache_dir=None, n_jobs=2).fit(corpus[0])
    out = vec.transform([""] * 1100)
    assert out.shape == (1100, 48) and not out.any()  # 3 concatenated 16-wide layers


def test_cv_must_partition_the_documents(corpus, bilm):
    from sklearn.model_selection import KFold, ShuffleSplit, StratifiedShuffleSplit

    X, y = corpus
    for splitter in (ShuffleSplit(n_splits=2, test_size=0.2, random_state=0),
                     StratifiedShuffleSplit(n_splits=2, test_size=0.2, random_state=0)):
        vec = ElmoVectorizer(bilm, layer_mix="trainable", cv=splitter, mix_epochs=1, cache_dir=None)
        with pytest.raises(ValueError, match="cv must partition.*in no test fold"):
            vec.fit_transform(X, y)
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))  # an iterable of splits
    out = ElmoVectorizer(bilm, layer_mix="trainable", cv=folds, mix_epochs=1,
                         cache_dir=None).fit_transform(X, y)
    assert (np.abs(out).sum(axis=1) > 0).all()  # no document left without features


BAD_CV = r"'cv' parameter of ElmoVectorizer must be an int in the range \[2, inf\)"


@pytest.mark.parametrize("cv, error, match", [
    (1, ValueError, BAD_CV), (-3, ValueError, BAD_CV), ("x", TypeError, BAD_CV),
    (True, TypeError, BAD_CV), (2.5, TypeError, BAD_CV),
])
@pytest.mark.parametrize("mix", ["frozen", "trainable"])
def test_bad_cv_is_rejected_by_fit(corpus, bilm, cv, error, match, mix):
    X, y = corpus
    with pytest.raises(error, match=match):
        ElmoVectorizer(bilm, layer_mix=mix, cv=cv, cache_dir=None).fit(X, y)


@pytest.mark.parametrize("mix", ["frozen", "trainable", "mlp"])
@pytest.mark.parametrize("pooling", ["mean", "max", "meanmax"])
def test_long_documents_stream_in_pieces_with_the_same_features(corpus, mix, pooling, monkeypatch):
    import elmofeat.elmo.transform as _elmo_transform

    X, y = corpus
    bilm = BiLM(**{**SMALL_BILM, "max_len": 8}).fit(X)
    vec = ElmoVectorizer(bilm, layer_mix=mix, pooling=pooling, mix_epochs=1, mlp_dim=6,
                         random_state=0, cache_dir=None).fit(X, y)
    long_doc = " ".join(X[:12])  # ~130 tokens
    docs = [X[0], long_doc, "", X[1]]
    expected = vec.transform(docs)
    # With a budget of 20 tokens the long document is read 16 tokens (2 windows) at a
    # time, and the short ones are grouped within the budget.
    monkeypatch.setattr(_elmo_transform, "TOKEN_BUDGET", 20)
    calls = []
    original = BiLM.embed_tokens
    monkeypatch.setattr(BiLM, "embed_tokens",
                        lambda self, tokens, *a, **k: calls.append(sum(map(len, tokens))) or original(self, tokens, *a, **k))
    _bilm_cache.REPRESENTATIONS.clear()
    streamed = vec.transform(docs)
    np.testing.assert_allclose(streamed, expected, rtol=1e-5, atol=1e-6)
    assert max(calls) <= 20 and sum(calls) >= len(long_doc.split())


def test_transform_keeps_no_representations_but_fit_does(corpus, bilm):
    import elmofeat

    X, y = corpus
    _bilm_cache.REPRESENTATIONS.clear()
    vec = ElmoVectorizer(bilm, layer_mix="trainable", mix_epochs=1, cache_dir=None).fit(X[:60], y[:60])
    held = _bilm_cache.REPRESENTATIONS.n_bytes
    assert held > 0  # the fit's documents, for the other candidates of a search
    vec.transform(X[60:])
    assert _bilm_cache.REPRESENTATIONS.n_bytes == held
    hits = _bilm_cache.REPRESENTATIONS.hits
    vec.transform(X[:60])  # what the fit left is used
    assert _bilm_cache.REPRESENTATIONS.hits == hits + 60
    with elmofeat.config_context(representation_cache_bytes=0):
        assert _bilm_cache.REPRESENTATIONS.n_bytes == 0
        ElmoVectorizer(bilm, layer_mix="trainable", mix_epochs=1, cache_dir=None).fit(X, y)
        assert _bilm_cache.REPRESENTATIONS.n_bytes == 0
    assert elmofeat.get_config()["representation_cache_bytes"] == 1 << 30
    for bad in (-1, 1.5, "1GB", True):
        with pytest.raises(ValueError, match="representation_cache_bytes must be an integer"):
            elmofeat.set_config(representation_cache_bytes=bad)



def test_inference_batch_size_does_not_change_the_features(corpus, bilm):
    X, _ = corpus
    default = ElmoVectorizer(bilm, cache_dir=None).fit(X)
    tiny_batches = ElmoVectorizer(bilm, batch_size=1, cache_dir=None).fit(X)
    _bilm_cache.REPRESENTATIONS.clear()
    np.testing.assert_array_equal(tiny_batches.transform(X[:20]), default.transform(X[:20]))


def test_device_is_where_the_vectorizer_runs(corpus, bilm):
    import torch

    X, _ = corpus
    # A fitted biLM already there (or "auto") is used as it is, not copied.
    assert ElmoVectorizer(bilm, device="cpu", cache_dir=None).fit(X).bilm_ is bilm
    assert ElmoVectorizer(bilm, cache_dir=None).fit(X).bilm_ is bilm
    # Moving makes a copy on the device and leaves the shared biLM alone.
    moved = bilm.copy_to("cpu")
    assert moved is not bilm and moved.language_model_ is not bilm.language_model_
    np.testing.assert_array_equal(moved.embed(X[:2])[0], bilm.embed(X[:2])[0])
    if not torch.cuda.is_available():
        for device in ("cuda", "cuda:1"):
            with pytest.raises(ValueError, match="torch sees no cuda device"):
                ElmoVectorizer(bilm, device=device, cache_dir=None).fit(X)
            with pytest.raises(ValueError, match="torch sees no cuda device"):
                BiLM(**{**SMALL_BILM, "device": device}).fit(X)


def test_mlp_mix_with_few_labels_is_aligned_on_unlabelled_documents_too(corpus, bilm, monkeypatch):
    # The alignment (label-free least squares, mlp_dim + 1 coefficients per output) is
    # underdetermined on a handful of labelled documents: unlabelled ones join it.
    from elmofeat.mixes import mlp as mlp_mix

    rows = []
    fit_alignment = mlp_mix.fit_alignment

    def spy(trained, trained_features, initial_features):
        rows.append(len(trained_features))
        return fit_alignment(trained, trained_features, initial_features)

    monkeypatch.setattr(mlp_mix, "fit_alignment", spy)
    X, y = corpus
    few = np.full(len(y), -1)
    few[:12] = y[:12]
    params = dict(layer_mix="mlp", mlp_dim=6, mix_epochs=1, random_state=0, cache_dir=None)
    vectorizer = ElmoVectorizer(bilm, **params).fit(X, few)
    assert rows == [10 * (6 + 1)]  # 12 labelled + 58 unlabelled
    assert np.isfinite(vectorizer.transform(X)).all()
    rows.clear()
    ElmoVectorizer(bilm, **params).fit(X[:12], y[:12])  # none unlabelled: the 12 alone
    assert rows == [12]


def test_scale_layers_bilm_takes_the_biLMs_own_scales_whatever_the_texts(corpus, bilm):
    X, _ = corpus
    assert bilm.layer_scales_ is not None
    one = ElmoVectorizer(bilm, layer_mix="frozen", scale_layers="bilm", cache_dir=None).fit(X[:1])
    many = ElmoVectorizer(bilm, layer_mix="frozen", scale_layers="bilm", cache_dir=None).fit(X)
    np.testing.assert_array_equal(one.layer_scales_, bilm.layer_scales_)
    np.testing.assert_array_equal(one.transform(X[:5]), many.transform(X[:5]))
    measured = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(X[:1])
    assert np.array_equal(measured.layer_scales_, np.ones(3))  # one document: nothing to measure
    import copy

    old = copy.deepcopy(bilm)
    old.layer_scales_ = None
    with pytest.raises(ValueError, match="scale_layers='bilm' needs a biLM that measured"):
        ElmoVectorizer(old, layer_mix="frozen", scale_layers="bilm", cache_dir=None).fit(X)


def test_a_clone_changing_bilm_params_leaves_the_original_and_its_output(corpus, bilm):
    """Clones share a fitted biLM; set_params(bilm__*) on one (as a GridSearchCV over
    elmo__bilm__* does) used to change the user's biLM and the original's features."""
    X, _ = corpus
    original = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(X)
    before = original.transform(X[:5])
    twin = clone(original).set_params(bilm__max_len=4)
    assert bilm.max_len != 4 and original.bilm.max_len == bilm.max_len
    assert twin.bilm.max_len == 4 and twin.bilm.language_model_ is bilm.language_model_
    twin.fit(X)
    np.testing.assert_array_equal(original.transform(X[:5]), before)
    assert not np.array_equal(twin.transform(X[:5]), before)


def test_refitting_a_shared_bilm_in_place_is_seen_by_transform(corpus):
    """The cached layers were keyed once, at fit: after bilm.fit(other texts) transform
    kept returning the old weights' layers until clear_caches()."""
    X, _ = corpus
    shared = BiLM(**SMALL_BILM).fit(X)
    vec = ElmoVectorizer(shared, layer_mix="frozen", cache_dir=None).fit(X)
    old = vec.transform(X[:5])
    shared.set_params(random_state=7).fit(X[::-1])
    fresh = ElmoVectorizer(shared, layer_mix="frozen", scale_layers=False, cache_dir=None)
    new_layers = fresh.fit(X).transform(X[:5])
    now = vec.transform(X[:5])
    assert not np.array_equal(now, old)
    expected = FEATURE_SCALE * vec.mix_.pool(*shared.embed_flat(X[:5]), vec.pooling)
    np.testing.assert_allclose(now, expected, rtol=1e-5, atol=1e-6)
    assert new_layers.shape == now.shape


def test_bilm_params_with_a_model_name_say_that_bilm_is_a_name(corpus, bilm, tmp_path):
    # With a default bilm name they died in scikit-learn: "'str' object has no
    # attribute 'set_params'".
    X, y = corpus
    with pytest.raises(ValueError, match=r"bilm='en-base' is a pretrained model's name.*"
                                         r"bilm__hidden_dim cannot be set"):
        ElmoVectorizer().set_params(bilm__hidden_dim=4)
    search = GridSearchCV(Pipeline([("elmo", ElmoVectorizer()),
                                    ("clf", LogisticRegression())]),
                          {"elmo__bilm__max_len": [16, 64]}, cv=2)
    with pytest.raises(ValueError, match=r"BiLM.from_pretrained\('en-base'\)"):
        search.fit(X[:20], y[:20])
    bilm.save_pretrained(tmp_path / "mine")
    with pytest.raises(ValueError, match="name or path"):
        ElmoVectorizer(tmp_path / "mine").set_params(bilm__max_len=4)
    # Setting bilm and its parameters together works, on a copy of a fitted one.
    vectorizer = ElmoVectorizer().set_params(bilm=bilm, bilm__max_len=4)
    assert vectorizer.bilm.max_len == 4 and bilm.max_len != 4


@pytest.mark.parametrize("params", [{"layer_mix": "concat", "bag_size": 12},
                                    {"layer_mix": "trainable", "mix_epochs": 2}])
def test_every_output_is_scaled_for_the_default_C_and_l2_rows_stay_unit(corpus, bilm, params,
                                                                        monkeypatch):
    from elmofeat.elmo import vectorizer as module

    X, y = corpus

    def fit_transform(**more):
        vec = ElmoVectorizer(bilm, cache_dir=None, random_state=0, **params, **more)
        return vec, vec.fit_transform(X, y), vec.transform(X[:9])

    vec, scaled, scaled_test = fit_transform()
    assert vec.feature_scale_ == FEATURE_SCALE == pytest.approx(0.1 ** 0.5)
    monkeypatch.setattr(module, "FEATURE_SCALE", 1.0)
    _, plain, plain_test = fit_transform()
    # the cross-fitted features of fit_transform and transform's: the same model's
    np.testing.assert_allclose(scaled, FEATURE_SCALE * plain, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(scaled_test, FEATURE_SCALE * plain_test, rtol=1e-5, atol=1e-7)
    _, unit, _ = fit_transform(norm="l2")
    monkeypatch.undo()
    np.testing.assert_allclose(fit_transform(norm="l2")[1], unit, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-5)
