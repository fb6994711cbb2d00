"""A text-aware check suite for elmofeat's classifiers (``ElmoClassifier``).

scikit-learn's ``check_estimator`` feeds numeric arrays, which a classifier of raw
strings refuses; these checks hold it to the same contract with text input: what
``check_classifiers_train``, ``check_classifiers_classes``,
``check_classifiers_one_label``, ``check_supervised_y_2d``, ``check_class_weight_*``,
``check_estimators_pickle`` and ``check_fit_idempotent`` ask of a classifier.
``tests/test_classifier.py`` runs :data:`CLASSIFIER_CHECKS` over each classifier.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV

from . import estimator_checks
from .estimator_checks import _check_init_only_stores, _load_in_fresh_process, _same_params


def _binary(y):
    """String labels of two classes from the corpus's topics."""
    return np.where(np.asarray(y) % 2 == 1, "spam", "ham")


def check_init_only_stores_params(estimator, X, y):
    _check_init_only_stores(estimator, "epochs", 0, (X, y))


def check_clone_and_params_round_trip(estimator, X, y):
    cloned = clone(estimator)
    assert cloned is not estimator and _same_params(cloned, estimator)
    assert cloned.set_params(epochs=estimator.epochs + 1) is cloned
    assert cloned.epochs == estimator.epochs + 1 != estimator.epochs
    fitted = clone(estimator).fit(X, y)
    with pytest.raises(NotFittedError):
        clone(fitted).predict(X)


def check_fit_returns_self_and_is_idempotent(estimator, X, y):
    est = clone(estimator)
    assert est.fit(X, y) is est
    first = est.decision_function(X)
    np.testing.assert_array_equal(est.fit(X, y).decision_function(X), first)


def check_not_fitted(estimator, X, y):
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(clone(estimator), method)(X)


def check_multiclass_outputs(estimator, X, y):
    est = clone(estimator).fit(X, y)
    classes = np.unique(y)
    np.testing.assert_array_equal(est.classes_, classes)
    scores, proba, predicted = (est.decision_function(X), est.predict_proba(X), est.predict(X))
    assert scores.shape == proba.shape == (len(X), len(classes))
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-6)
    assert (proba >= 0).all() and np.isfinite(scores).all()
    np.testing.assert_array_equal(predicted, classes[scores.argmax(1)])
    np.testing.assert_array_equal(predicted, classes[proba.argmax(1)])
    np.testing.assert_allclose(est.predict_log_proba(X), np.log(proba), rtol=1e-6)
    # the synthetic topics are easy: a classifier learns them
    assert est.score(X, y) > 0.5


def check_binary_string_labels(estimator, X, y):
    labels = _binary(y)
    est = clone(estimator).fit(X, labels)
    assert est.classes_.tolist() == ["ham", "spam"]
    scores = est.decision_function(X)
    assert scores.shape == (len(X),)  # one score for two classes, as LogisticRegression
    np.testing.assert_array_equal(est.predict(X), np.where(scores > 0, "spam", "ham"))
    assert est.predict_proba(X).shape == (len(X), 2)
    # integer labels of the same classes: the same model, other names
    codes = (labels == "spam").astype(int)
    np.testing.assert_array_equal(clone(estimator).fit(X, codes).decision_function(X), scores)


def check_same_random_state_same_output(estimator, X, y):
    estimator_checks.check_same_random_state_same_output(estimator, X, y, "decision_function")


def check_independent_of_batch(estimator, X, y):
    estimator_checks.check_transform_independent_of_batch(estimator, X, y, "decision_function")


def check_empty_document(estimator, X, y):
    est = clone(estimator).fit(X, y)
    proba = est.predict_proba(["", X[0]])
    assert np.isfinite(proba).all() and est.predict([""]).shape == (1,)


def check_bad_input(estimator, X, y):
    est = clone(estimator)
    cases = [("a single document", TypeError, "single str"),
             (["ok", None] + X[2:], TypeError, r"X\[1\] is None"),
             (pd.DataFrame({"text": X}), TypeError, "DataFrame")]
    for bad, error, match in cases:
        with pytest.raises(error, match=match):
            est.fit(bad, y)
    fitted = clone(estimator).fit(X, y)
    with pytest.raises(TypeError, match="single str"):
        fitted.predict("a single document")
    for labels, match in [(y[:-1], "documents but y"), (np.zeros(len(X)), "single class"),
                          (np.linspace(0, 1, len(X)), "Unknown label type"),
                          (np.c_[y, y], "documents but y")]:
        with pytest.raises(ValueError, match=match):
            clone(estimator).fit(X, labels)
    with pytest.raises(ValueError, match="class labels"):
        clone(estimator).fit(X, None)
    with pytest.raises(ValueError, match="empty"):
        clone(estimator).fit([], [])


def check_class_weight(estimator, X, y):
    """A heavy weight on one class makes the classifier predict it more often (labels
    drawn at random, a third "spam": no model separates them)."""
    labels = np.where(np.random.RandomState(0).rand(len(X)) < 1 / 3, "spam", "ham")
    plain = clone(estimator).fit(X, labels).predict(X)
    heavy = clone(estimator).set_params(class_weight={"ham": 1.0, "spam": 50.0}).fit(X, labels)
    assert (heavy.predict(X) == "spam").sum() > (plain == "spam").sum()
    balanced = clone(estimator).set_params(class_weight="balanced").fit(X, labels)
    assert balanced.predict(X).shape == (len(X),)


def check_pickle_in_fresh_process(estimator, X, y, tmp_path):
    import joblib

    est = clone(estimator).fit(X, _binary(y))
    loaded = _load_in_fresh_process(lambda path: joblib.dump(est, path), "joblib.load({path})",
                                    "model.predict_proba(X)", X, tmp_path)
    np.testing.assert_array_equal(loaded, est.predict_proba(X))


def check_safe_file_in_fresh_process(estimator, X, y, tmp_path):
    import elmofeat

    est = clone(estimator).fit(X, y)
    loaded = _load_in_fresh_process(lambda path: elmofeat.dump(est, path),
                                    "elmofeat.load({path})", "model.decision_function(X)", X,
                                    tmp_path)
    np.testing.assert_array_equal(loaded, est.decision_function(X))


def check_grid_search(estimator, X, y):
    search = GridSearchCV(clone(estimator), {"C": [0.1, 1.0]}, cv=2).fit(X, y)
    assert search.best_params_["C"] in (0.1, 1.0) and search.best_score_ > 0.5
    assert search.predict(X[:4]).shape == (4,)


def check_tags(estimator, X, y):
    tags = estimator.__sklearn_tags__()
    assert is_classifier(estimator) and tags.estimator_type == "classifier"
    assert tags.input_tags.string and not tags.input_tags.two_d_array
    assert tags.requires_fit and tags.target_tags.required


CLASSIFIER_CHECKS = [
    check_init_only_stores_params,
    check_clone_and_params_round_trip,
    check_fit_returns_self_and_is_idempotent,
    check_not_fitted,
    check_multiclass_outputs,
    check_binary_string_labels,
    check_same_random_state_same_output,
    check_independent_of_batch,
    check_empty_document,
    check_bad_input,
    check_class_weight,
    check_pickle_in_fresh_process,
    check_safe_file_in_fresh_process,
    check_grid_search,
    check_tags,
]
