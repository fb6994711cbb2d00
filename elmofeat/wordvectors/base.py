"""Shared machinery of the static word-vector vectorizers (SVD and skip-gram).

Both learn one vector per vocabulary word in ``fit`` and keep nothing else: the
trained vectors live in a gensim :class:`~gensim.models.KeyedVectors`
(``keyed_vectors_``), apart from any training state, so pickles stay small and the
vectors can be reused elsewhere (``kv.most_similar``, initialising a biLM...).
``transform`` looks every token up in one vectorized call and pools.
"""

from __future__ import annotations

import numpy as np
from gensim.models import KeyedVectors
from sklearn.utils.validation import check_is_fitted

from .._base import BaseTextVectorizer
from .._param_validation import fit_context
from .._pooling import check_pooling, pool_lookup
from ..text import Vocabulary


def keyed_vectors_from_arrays(words, vectors: np.ndarray, counts=None) -> KeyedVectors:
    """Wrap ``vectors`` (one row per word) in a gensim ``KeyedVectors``."""
    kv = KeyedVectors(vector_size=vectors.shape[1], dtype=np.float32)
    kv.add_vectors(list(words), np.asarray(vectors, dtype=np.float32))
    if counts is not None:
        kv.expandos["count"] = np.asarray(counts, dtype=np.int64)
    return kv


class BaseWordVectorizer(BaseTextVectorizer):
    """Base of vectorizers that pool static word vectors.

    Subclasses implement ``_fit_keyed_vectors(token_lists) -> KeyedVectors``.
    Out-of-vocabulary tokens are ignored when pooling; a document with no
    in-vocabulary token gets a zero vector.
    """

    def _fit_keyed_vectors(self, token_lists):  # pragma: no cover - abstract
        raise NotImplementedError

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn word vectors from the documents ``X``.

        Parameters
        ----------
        X : iterable of str
            Training documents.
        y : None
            Ignored.

        Returns
        -------
        self : object
            Fitted vectorizer.
        """
        token_lists = self._tokenize(X)
        if not token_lists:
            raise ValueError("X is empty: fit needs at least one document")
        self.keyed_vectors_ = self._fit_keyed_vectors(token_lists)
        self._lookup = None
        return self

    @property
    def _n_token_features(self) -> int:
        return self.keyed_vectors_.vector_size

    def _vocabulary(self) -> Vocabulary:
        # Built from keyed_vectors_ on first use and never pickled (see __getstate__).
        if getattr(self, "_lookup", None) is None:
            kv = self.keyed_vectors_
            self._lookup = Vocabulary(kv.index_to_key, np.zeros(len(kv), dtype=np.int64))
        return self._lookup

    def transform(self, X):
        """Pool the word vectors of each document.

        Parameters
        ----------
        X : iterable of str
            Documents.

        Returns
        -------
        features : ndarray of shape (n_documents, n_features), float32
            Zeros for a document without any in-vocabulary token.
        """
        check_is_fitted(self, "keyed_vectors_")
        check_pooling(self.pooling)
        corpus = self._vocabulary().encode(self._tokenize(X))
        return self._finish(pool_lookup(corpus, self.keyed_vectors_.vectors, self.pooling))

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_lookup", None)
        return state
