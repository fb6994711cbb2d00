"""A text-aware estimator check suite for elmofeat's vectorizers.

scikit-learn's ``check_estimator`` skips estimators that take raw strings, so this
module checks the same contract with text input. :func:`text_estimator_checks`
yields every check for one estimator; ``tests/test_estimator_checks.py`` runs them
over every vectorizer (add new vectorizers there).
"""

from __future__ import annotations

import json
import pickle
import textwrap
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from elmofeat.exceptions import ElmofeatVersionWarning

from .fresh_process import run_fresh


def make_topic_corpus(n_documents=120, n_topics=4, seed=0):
    """Synthetic labelled corpus: each topic has its own words plus shared filler words."""
    rng = np.random.RandomState(seed)
    shared = [f"common{i}" for i in range(15)]
    topic_words = [[f"topic{t}word{i}" for i in range(12)] for t in range(n_topics)]
    docs, labels = [], []
    for d in range(n_documents):
        topic = d % n_topics
        n = rng.randint(6, 18)
        words = [
            topic_words[topic][rng.randint(12)] if rng.rand() < 0.6 else shared[rng.randint(15)]
            for _ in range(n)
        ]
        docs.append(" ".join(words).capitalize() + ".")
        labels.append(topic)
    return docs, np.asarray(labels)


# --------------------------------------------------------------------------- checks


def _check_init_only_stores(estimator, bad_param, bad_value, fit_args):
    params = estimator.get_params(deep=False)
    fresh = type(estimator)(**params)
    assert set(vars(fresh)) == set(params), "__init__ must store its parameters and nothing else"
    for name, value in params.items():
        assert getattr(fresh, name) is value, f"__init__ changed parameter {name}"
    # Validation happens in fit, not in __init__.
    broken = type(estimator)(**{**params, bad_param: bad_value})
    with pytest.raises(ValueError, match=bad_param):
        broken.fit(*fit_args)


def check_init_only_stores_params(estimator, X, y):
    _check_init_only_stores(estimator, "pooling", "not-a-pooling", (X, y))


def _same_params(a, b) -> bool:
    """Parameters equal, comparing nested estimators by their own parameters."""
    pa, pb = a.get_params(deep=False), b.get_params(deep=False)
    if pa.keys() != pb.keys():
        return False
    for key in pa:
        x, y = pa[key], pb[key]
        if hasattr(x, "get_params") and hasattr(y, "get_params"):
            if type(x) is not type(y) or not _same_params(x, y):
                return False
        elif x != y:
            return False
    return True


def check_clone_and_params_round_trip(estimator, X, y):
    cloned = clone(estimator)
    assert cloned is not estimator
    assert _same_params(cloned, estimator)
    original = estimator.pooling
    other = "max" if original != "max" else "mean"
    assert cloned.set_params(pooling=other) is cloned
    assert cloned.get_params()["pooling"] == other
    assert estimator.pooling == original, "set_params on a clone changed the original"
    # Cloning a fitted estimator gives an unfitted one.
    fitted = clone(estimator).fit(X, y)
    with pytest.raises(NotFittedError):
        clone(fitted).transform(X)


def check_fit_returns_self(estimator, X, y):
    est = clone(estimator)
    assert est.fit(X, y) is est
    if not estimator.__sklearn_tags__().target_tags.required:
        assert est.fit(X) is est  # unsupervised: y is optional


def check_not_fitted(estimator, X, y):
    est = clone(estimator)
    with pytest.raises(NotFittedError):
        est.transform(X)
    with pytest.raises(NotFittedError):
        est.get_feature_names_out()


def check_output_shape_dtype_and_names(estimator, X, y):
    est = clone(estimator).fit(X, y)
    out = est.transform(X)
    names = est.get_feature_names_out()
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    assert out.shape == (len(X), len(names))
    assert len(set(names)) == len(names)
    assert all(isinstance(n, str) for n in names)
    assert np.isfinite(out).all()
    assert np.abs(out).sum() > 0


def check_fit_transform_matches_fit_then_transform(estimator, X, y):
    a = clone(estimator).fit_transform(X, y)
    b = clone(estimator).fit(X, y).transform(X)
    learns_from_labels = (estimator.__sklearn_tags__().target_tags.required
                          or getattr(estimator, "fine_tune_epochs", 0))
    if not learns_from_labels:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    else:  # what learned from labels cross-fits in fit_transform (as TargetEncoder does)
        assert a.shape == b.shape and np.isfinite(a).all()
        assert not np.array_equal(a, b)
    if getattr(estimator, "fine_tune_epochs", 0):  # without labels: nothing to cross-fit
        np.testing.assert_allclose(clone(estimator).fit(X).transform(X),
                                   clone(estimator).fit_transform(X), rtol=1e-6, atol=1e-7)


def check_same_random_state_same_output(estimator, X, y, method="transform"):
    a = getattr(clone(estimator).fit(X, y), method)(X)
    b = getattr(clone(estimator).fit(X, y), method)(X)
    np.testing.assert_array_equal(a, b)


def check_transform_independent_of_batch(estimator, X, y, method="transform"):
    """``method``'s output for a document does not depend on the documents beside it."""
    outputs = getattr(clone(estimator).fit(X, y), method)
    together = outputs(X[:10])
    alone = np.vstack([outputs([doc]) for doc in X[:10]]).reshape(together.shape)
    np.testing.assert_array_equal(together, alone)  # to the last bit
    reordered = outputs(X[:10][::-1])[::-1]
    np.testing.assert_array_equal(together, reordered)


def check_empty_document_gives_zeros(estimator, X, y):
    est = clone(estimator).fit(X, y)
    out = est.transform(["", "   ", "qqqunseen zzzunknown", X[0]])
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(out[:2], 0)
    # A batch with no token at all, not only empty documents among others.
    blank = est.transform(["", "  ", "\n\t"])
    assert blank.shape == (3, out.shape[1])
    np.testing.assert_array_equal(blank, 0)
    if hasattr(est, "keyed_vectors_"):  # static word vectors ignore unknown words
        np.testing.assert_array_equal(out[2], 0)
    else:  # a language model still reads unknown words in context
        assert np.abs(out[2]).sum() > 0
    assert np.abs(out[3]).sum() > 0
    assert est.transform([]).shape == (0, len(est.get_feature_names_out()))


def check_bad_input(estimator, X, y):
    est = clone(estimator)
    fitted = clone(estimator).fit(X, y)
    cases = [
        ("a single document", TypeError, "single str"),
        (None, TypeError, "None"),
        (b"bytes", TypeError, "bytes"),
        (["ok", None, "ok"], TypeError, r"X\[1\] is None"),
        (["ok", "ok", float("nan")], ValueError, r"X\[2\].*missing"),
        ([b"raw bytes"], TypeError, r"X\[0\] is bytes"),
        (["ok", 3], TypeError, r"X\[1\].*int"),
        (pd.DataFrame({"text": ["a b"]}), TypeError, "DataFrame"),
        (np.array([["a", "b"]]), TypeError, "1-D"),
        (42, TypeError, "iterable"),
    ]
    for bad, error, match in cases:
        with pytest.raises(error, match=match):
            est.fit(bad, y)
        with pytest.raises(error, match=match):
            fitted.transform(bad)
    with pytest.raises(ValueError, match="empty"):
        clone(estimator).fit([], [])


def check_accepts_iterables(estimator, X, y):
    est = clone(estimator).fit(X, y)
    expected = est.transform(X[:5])
    for variant in (tuple(X[:5]), np.asarray(X[:5], dtype=object), pd.Series(X[:5]), iter(X[:5])):
        np.testing.assert_array_equal(est.transform(variant), expected)


def _load_in_fresh_process(save, load, outputs, X, tmp_path, prelude="") -> np.ndarray:
    """Save with ``save(path)``; in a fresh process (:mod:`tests.fresh_process`; warnings
    as errors) run ``prelude``, load the file with the statement ``load`` (binding
    ``model``) and return ``outputs`` there."""
    model_path, docs_path, out_path = (tmp_path / n for n in ("model", "d.json", "o.npy"))
    save(model_path)
    docs_path.write_text(json.dumps(X))
    code = textwrap.dedent(
        f"""
        import json, warnings, joblib, numpy as np, elmofeat
        warnings.simplefilter("error")
        {prelude}
        model = {load.format(path=repr(str(model_path)))}
        X = json.load(open({str(docs_path)!r}))
        np.save({str(out_path)!r}, {outputs})
        """
    )
    run_fresh(code, tmp_path)
    return np.load(out_path)


def check_pickle_in_fresh_process(estimator, X, y, tmp_path, prelude=""):
    est = clone(estimator).fit(X, y)
    loaded = _load_in_fresh_process(lambda path: joblib.dump(est, path), "joblib.load({path})",
                                    "model.transform(X)", X, tmp_path, prelude)
    np.testing.assert_array_equal(loaded, est.transform(X))


def check_safe_file_in_fresh_process(estimator, X, y, tmp_path, prelude=""):
    """elmofeat.dump / load: the estimator inside a Pipeline, loaded in another process
    without running code from the file, transforms and predicts the same. ``prelude``:
    a statement run there first (registering a user's mix)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    import elmofeat

    pipe = make_pipeline(clone(estimator), LogisticRegression(max_iter=500)).fit(X, y)
    loaded = _load_in_fresh_process(
        lambda path: elmofeat.dump(pipe, path), "elmofeat.load({path})",
        "np.hstack([model[0].transform(X), model.predict_proba(X)])", X, tmp_path, prelude)
    np.testing.assert_array_equal(loaded, np.hstack([pipe[0].transform(X), pipe.predict_proba(X)]))


def check_version_stamps_warn_on_mismatch(estimator, X, y):
    est = clone(estimator).fit(X, y)
    state = est.__getstate__()
    assert state["_elmofeat_version_stamps"]["elmofeat"]
    blob = pickle.dumps(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pickle.loads(blob)  # same versions: silent
    state["_elmofeat_version_stamps"] = {**state["_elmofeat_version_stamps"], "elmofeat": "0.0.0"}
    other = type(estimator).__new__(type(estimator))
    with pytest.warns(ElmofeatVersionWarning, match="elmofeat 0.0.0"):
        other.__setstate__(state)
    np.testing.assert_array_equal(other.transform(X[:3]), est.transform(X[:3]))


def check_set_output_pandas(estimator, X, y):
    est = clone(estimator).set_output(transform="pandas")
    frame = est.fit_transform(X, y)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(est.get_feature_names_out())
    assert isinstance(est.transform(X[:3]), pd.DataFrame)
    pipe = Pipeline([("vec", clone(estimator)), ("clf", LogisticRegression(max_iter=200))])
    pipe.set_output(transform="pandas")
    pipe.fit(X, y)
    assert isinstance(pipe[:-1].transform(X[:3]), pd.DataFrame)
    assert pipe.predict(X[:3]).shape == (3,)
    # set_output before clone (as GridSearchCV clones a configured pipeline): kept.
    configured = clone(clone(estimator).set_output(transform="pandas")).fit(X, y)
    assert isinstance(configured.transform(X[:3]), pd.DataFrame)
    search = GridSearchCV(Pipeline([("vec", clone(estimator)),
                                    ("clf", LogisticRegression(max_iter=200))]).set_output(
        transform="pandas"), {"clf__C": [1.0]}, cv=2).fit(X, y)
    assert isinstance(search.best_estimator_[:-1].transform(X[:3]), pd.DataFrame)


def check_pipeline_and_grid_search(estimator, X, y):
    for n_jobs in (1, 2):
        pipe = Pipeline([("vec", clone(estimator)), ("clf", LogisticRegression(max_iter=500))])
        search = GridSearchCV(pipe, {"vec__pooling": ["mean", "meanmax"]}, cv=2, n_jobs=n_jobs)
        search.fit(X, y)
        assert search.best_params_["vec__pooling"] in ("mean", "meanmax")
        # The synthetic topics are easy: features that carry them score well above chance.
        assert search.best_score_ > 0.5
        assert search.predict(X[:4]).shape == (4,)


def check_tags(estimator, X, y):
    tags = estimator.__sklearn_tags__()
    assert tags.input_tags.string and not tags.input_tags.two_d_array
    assert tags.requires_fit
    output = clone(estimator).fit(X, y).transform(X[:2])
    assert tags.transformer_tags.preserves_dtype == [output.dtype.name] == ["float32"]
    if not tags.target_tags.required:
        clone(estimator).fit(X)  # no labels needed
    else:
        with pytest.raises(ValueError, match="pass y"):
            clone(estimator).fit(X)


CHECKS = [
    check_init_only_stores_params,
    check_clone_and_params_round_trip,
    check_fit_returns_self,
    check_not_fitted,
    check_output_shape_dtype_and_names,
    check_fit_transform_matches_fit_then_transform,
    check_same_random_state_same_output,
    check_transform_independent_of_batch,
    check_empty_document_gives_zeros,
    check_bad_input,
    check_accepts_iterables,
    check_pickle_in_fresh_process,
    check_safe_file_in_fresh_process,
    check_version_stamps_warn_on_mismatch,
    check_set_output_pandas,
    check_pipeline_and_grid_search,
    check_tags,
]


def check_norm_and_dtype(estimator, X, y):
    """norm="l2" gives unit rows (a zero row stays zero); dtype sets the output type."""
    plain = clone(estimator).fit(X, y).transform(X[:5] + [""])
    est = clone(estimator).set_params(norm="l2", dtype=np.float64).fit(X, y)
    out = est.transform(X[:5] + [""])
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(out[:5], axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(out[5], 0)
    np.testing.assert_allclose(out[:5], plain[:5] / np.linalg.norm(plain[:5], axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    assert est.__sklearn_tags__().transformer_tags.preserves_dtype == ["float64"]
    for params, match in [({"norm": "l1"}, "'norm' parameter .* must be a str among {'l2'} or None"),
                          ({"dtype": np.int64}, "'dtype' parameter .* a dtype among")]:
        with pytest.raises(ValueError, match=match):
            clone(estimator).set_params(**params).fit(X, y)


CHECKS.append(check_norm_and_dtype)


# ------------------------------------------------------------- the language model
# BiLM is an estimator too (fit on texts, score by held-out likelihood, embed tokens):
# the same contract where it applies, with embed in the place of transform.


def _embedded(lm, X) -> np.ndarray:
    """All token representations of ``X`` in one array (n_tokens, n_layers, dim)."""
    return np.concatenate([layers for layers in lm.embed(X)])


def check_lm_init_only_stores_params(estimator, X, y):
    _check_init_only_stores(estimator, "hidden_dim", 0, (X,))


def check_lm_clone_params_and_fit(estimator, X, y):
    cloned = clone(estimator)
    assert cloned is not estimator and _same_params(cloned, estimator)
    assert cloned.set_params(hidden_dim=estimator.hidden_dim + 4) is cloned
    assert estimator.get_params()["hidden_dim"] != cloned.hidden_dim
    from elmofeat.bilm.io import weights_digest

    fitted = clone(estimator)
    assert fitted.fit(X) is fitted
    assert weights_digest(clone(estimator).fit(X, y)) == weights_digest(fitted)  # y is ignored
    for method in ("embed", "score", "perplexity"):
        with pytest.raises(NotFittedError):
            getattr(clone(fitted), method)(X)  # a clone of a fitted model is unfitted


def check_lm_same_random_state_same_model(estimator, X, y):
    from elmofeat.bilm.io import weights_digest

    a, b = clone(estimator).fit(X), clone(estimator).fit(X)
    assert weights_digest(a) == weights_digest(b)
    np.testing.assert_array_equal(_embedded(a, X[:5]), _embedded(b, X[:5]))
    assert a.score(X) == b.score(X)


def check_lm_embed_shapes_and_batch_independence(estimator, X, y):
    lm = clone(estimator).fit(X)
    together = lm.embed(X[:8] + ["", "qqqunseen zzzunknown"])
    dim = 2 * lm.embedding_dim
    for doc, layers in zip(X[:8], together):
        assert layers.dtype == np.float32 and np.isfinite(layers).all()
        assert layers.shape == (len(lm._tokenize([doc])[0]), 3, dim)
    assert together[8].shape == (0, 3, dim)  # an empty document has no token
    assert together[9].shape[0] == 2 and np.abs(together[9]).sum() > 0  # unknown words, in context
    for doc, layers in zip(X[:8], together):
        np.testing.assert_array_equal(lm.embed([doc])[0], layers)  # to the last bit


def check_lm_score_is_likelihood_and_tunes_by_grid_search(estimator, X, y):
    lm = clone(estimator).fit(X)
    score = lm.score(X)
    assert np.isfinite(score) and score < 0
    np.testing.assert_allclose(score, -np.log(lm.perplexity(X)), rtol=1e-6)
    # Greater is better: more pretraining scores higher on the same text.
    longer = clone(estimator).set_params(max_epochs=estimator.max_epochs + 2, patience=None)
    assert longer.fit(X).score(X) > score
    with pytest.raises(ValueError, match="no token"):
        lm.score(["", "  "])
    search = GridSearchCV(clone(estimator), {"hidden_dim": [estimator.hidden_dim,
                                                            estimator.hidden_dim + 4]}, cv=2)
    search.fit(X)
    assert np.isfinite(search.best_score_) and search.best_params_["hidden_dim"] in (
        estimator.hidden_dim, estimator.hidden_dim + 4)


def check_lm_bad_input(estimator, X, y):
    fitted = clone(estimator).fit(X)
    cases = [
        ("a single document", TypeError, "single str"),
        (None, TypeError, "None"),
        (["ok", None, "ok"], TypeError, r"X\[1\] is None"),
        (["ok", "ok", float("nan")], ValueError, r"X\[2\].*missing"),
        ([b"raw bytes"], TypeError, r"X\[0\] is bytes"),
        (pd.DataFrame({"text": ["a b"]}), TypeError, "DataFrame"),
        (42, TypeError, "iterable"),
    ]
    for bad, error, match in cases:
        for call in (clone(estimator).fit, fitted.embed, fitted.score):
            with pytest.raises(error, match=match):
                call(bad)
    with pytest.raises(ValueError, match="empty"):
        clone(estimator).fit([])


def check_lm_accepts_iterables(estimator, X, y):
    lm = clone(estimator).fit(X)
    expected = _embedded(lm, X[:5])
    for variant in (tuple(X[:5]), np.asarray(X[:5], dtype=object), pd.Series(X[:5]), iter(X[:5])):
        np.testing.assert_array_equal(_embedded(lm, variant), expected)


def check_lm_files_in_fresh_process(estimator, X, y, tmp_path):
    """joblib pickle, BiLM.save and elmofeat.dump all load in a new process to the same model."""
    import elmofeat

    lm = clone(estimator).fit(X)
    expected = _embedded(lm, X[:5])
    outputs = "np.concatenate(model.embed(X[:5]))"
    for name, save, load in [
        ("pickle", lambda path: joblib.dump(lm, path), "joblib.load({path})"),
        ("save", lm.save, "elmofeat.BiLM.load({path})"),
        ("skops", lambda path: elmofeat.dump(lm, path), "elmofeat.load({path})"),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        loaded = _load_in_fresh_process(save, load, outputs, X, folder)
        np.testing.assert_array_equal(loaded, expected, err_msg=name)


def check_lm_version_stamps_warn_on_mismatch(estimator, X, y):
    lm = clone(estimator).fit(X)
    state = lm.__getstate__()
    assert state["_elmofeat_version_stamps"]["elmofeat"]
    state["_elmofeat_version_stamps"] = {**state["_elmofeat_version_stamps"], "elmofeat": "0.0.0"}
    other = type(estimator).__new__(type(estimator))
    with pytest.warns(ElmofeatVersionWarning, match="elmofeat 0.0.0"):
        other.__setstate__(state)
    np.testing.assert_array_equal(_embedded(other, X[:3]), _embedded(lm, X[:3]))


def check_lm_tags(estimator, X, y):
    tags = estimator.__sklearn_tags__()
    assert tags.input_tags.string and not tags.input_tags.two_d_array
    assert tags.requires_fit and not tags.target_tags.required


LANGUAGE_MODEL_CHECKS = [
    check_lm_init_only_stores_params,
    check_lm_clone_params_and_fit,
    check_lm_same_random_state_same_model,
    check_lm_embed_shapes_and_batch_independence,
    check_lm_score_is_likelihood_and_tunes_by_grid_search,
    check_lm_bad_input,
    check_lm_accepts_iterables,
    check_lm_files_in_fresh_process,
    check_lm_version_stamps_warn_on_mismatch,
    check_lm_tags,
]
