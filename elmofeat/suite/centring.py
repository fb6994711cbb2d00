"""Dense features minus their training mean, before the suite's LogisticRegression.

The intercept of scikit-learn's LogisticRegression is not penalised, so subtracting a
constant vector from every row leaves the fitted model's predictions as they were: the
intercept absorbs it. What changes is the problem's conditioning. The features of a biLM
pretrained on a few thousand texts share a large common offset (the norm of their mean
is many times their typical spread), and lbfgs needed over 1,300 iterations to fit them;
centred, it needs a fraction of that (``benchmarks/classifier_solvers.py``). Sparse
features (TF-IDF, the hybrid's block) pass through unchanged: centring would densify them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data


class CentreDense(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Subtract the training mean from dense features; leave sparse ones as they are.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,) or None
        The training features' mean (float64 sums, stored in their dtype); None when
        they were sparse.
    n_features_in_ : int
    """

    def fit(self, X, y=None):
        X = validate_data(self, X, accept_sparse=True, dtype=(np.float64, np.float32))
        self.mean_ = (None if sp.issparse(X)
                      else X.mean(axis=0, dtype=np.float64).astype(X.dtype))
        return self

    def transform(self, X):
        check_is_fitted(self, "mean_")
        X = validate_data(self, X, accept_sparse=True, dtype=(np.float64, np.float32),
                          reset=False)
        if sp.issparse(X) != (self.mean_ is None):
            fitted = "sparse" if self.mean_ is None else "dense"
            given = "sparse" if sp.issparse(X) else "dense"
            raise ValueError(f"CentreDense was fitted on {fitted} features and given {given} ones")
        return X if self.mean_ is None else X - self.mean_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
