"""The base class of every elmofeat vectorizer: the scikit-learn plumbing in one place.

It gives the vectorizers

* scikit-learn's tags for estimators that take raw strings;
* input validation and tokenization with scikit-learn's text conventions;
* ``get_feature_names_out`` (and through it ``set_output(transform="pandas")``);
* version stamps in their pickles, checked with a warning at load time.
"""

from __future__ import annotations

import contextvars

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._param_validation import Dtypes, StrOptions
from ._pooling import POOLING_METHODS, pooled_feature_names
from .text import TextTokenizer, check_token_pattern, read_once, validate_documents
from ._stamps import STAMP_KEY, check_version_stamps, version_stamps


class TextEstimatorMixin:
    """Text input and version-stamped pickles for any elmofeat estimator.

    Needs the ``lowercase``, ``token_pattern`` and ``tokenizer`` parameters.
    """

    # Distributions whose versions are stamped into pickles; subclasses extend it.
    _stamped_packages: tuple[str, ...] = ("elmofeat", "scikit-learn", "numpy", "scipy")
    # The text parameters' constraints; subclasses' _parameter_constraints include them.
    _text_parameter_constraints: dict = {
        "lowercase": ["boolean"],
        "token_pattern": [str, None],
        "tokenizer": [callable, None],
    }

    def _tokenize(self, X, *, name: str = "X") -> list[list[str]]:
        documents = validate_documents(X, name=name)
        tokenizer = TextTokenizer(self.lowercase, self.token_pattern, self.tokenizer)
        return tokenizer(documents)

    def __getstate__(self):
        # A copy: on Python >= 3.11 object.__getstate__ returns the live __dict__.
        state = dict(super().__getstate__())
        state[STAMP_KEY] = version_stamps(self._stamped_packages)
        return state

    def __reduce_ex__(self, protocol):
        # pickle, copy.deepcopy and joblib's workers rebuild through here; skops calls
        # __setstate__ directly. A pickle runs code when loaded (it is trusted or not
        # loaded at all), so its token pattern is taken as it is; a skops file's is
        # checked (check_token_pattern).
        return (_unpickle, (type(self), self.__getstate__()))

    def __setstate__(self, state):
        state = dict(state)
        check_version_stamps(state.pop(STAMP_KEY, None), f"This {type(self).__name__}")
        if not _FROM_PICKLE.get() and state.get("tokenizer") is None:
            # A skops file from someone else must not hang transform.
            check_token_pattern(state.get("token_pattern"),
                                f"this {type(self).__name__} (read from a file)")
        super().__setstate__(state)


# True while a pickle (or copy.deepcopy) rebuilds an estimator: see __reduce_ex__.
_FROM_PICKLE = contextvars.ContextVar("elmofeat_from_pickle", default=False)


def _unpickle(cls, state):
    """Rebuild an elmofeat estimator from a pickle or a copy (see ``__reduce_ex__``):
    its own ``__setstate__``, with the token pattern taken as it is."""
    estimator = cls.__new__(cls)
    token = _FROM_PICKLE.set(True)
    try:
        estimator.__setstate__(state)
    finally:
        _FROM_PICKLE.reset(token)
    return estimator


class BaseTextVectorizer(TextEstimatorMixin, TransformerMixin, BaseEstimator):
    """Base class for estimators that turn raw documents into dense features.

    Subclasses set ``_feature_prefix`` and, once fitted, ``_n_token_features``
    (the width of a token vector before pooling) and a ``pooling`` parameter.
    """

    _feature_prefix = "feature"
    # The output options every vectorizer has; subclasses' _parameter_constraints
    # include them.
    _output_parameter_constraints: dict = {
        "pooling": [StrOptions(set(POOLING_METHODS))],
        "norm": [StrOptions({"l2"}), None],
        "dtype": [Dtypes(("float32", "float64"))],
    }

    def fit_transform(self, X, y=None, **fit_params):
        """``fit(X, y).transform(X)``; a one-shot iterable of documents (a generator) is
        read once, not found empty by ``transform``.

        Returns
        -------
        features : ndarray of shape (n_documents, n_features)
        """
        return super().fit_transform(read_once(X), y, **fit_params)

    def _finish(self, features: np.ndarray) -> np.ndarray:
        """Apply ``norm`` and ``dtype`` to pooled features (float32 internally)."""
        if self.norm == "l2":
            lengths = np.linalg.norm(features, axis=1, keepdims=True)
            features = features / np.where(lengths > 0, lengths, 1)
        return np.ascontiguousarray(features, dtype=self.dtype)

    def _clone_sharing(self, **shared):
        """A clone whose ``shared`` parameters are passed as they are (not copied), the
        others cloned as ``sklearn.base.clone`` does, with the ``set_output`` choice kept.
        For ``__sklearn_clone__`` of estimators that hold large read-only objects."""
        from sklearn.base import clone

        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items()
                  if k not in shared}
        new = type(self)(**params, **shared)
        if hasattr(self, "_sklearn_output_config"):
            new._sklearn_output_config = dict(self._sklearn_output_config)
        return new

    def get_feature_names_out(self, input_features=None):
        """Names of the output features, e.g. ``svd_mean0`` ... ``svd_mean299``.

        Parameters
        ----------
        input_features : None
            Ignored; present for API consistency (text input has no feature names).

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self, "_n_token_features")
        return pooled_feature_names(self._feature_prefix, self._n_token_features, self.pooling)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        if tags.transformer_tags is not None:
            # The features' type is the dtype parameter, whatever the input.
            try:
                tags.transformer_tags.preserves_dtype = [np.dtype(self.dtype).name]
            except TypeError:  # an invalid dtype: fit will say so
                tags.transformer_tags.preserves_dtype = []
        return tags
