"""Blocks' class scores for :class:`~elmofeat.StackingVectorizer`: one logistic
regression per block, its scores row by row, and their blend by one weight per block.

Why a blend: a classifier reading every block's scores side by side learns
``n_classes x n_blocks x n_classes`` weights. With 20 classes and 30 training documents
a class (20 Newsgroups, 600 posts) it cannot tell from so few documents that one block
is the better one, and the stack scored 4.83 points below its TF-IDF block alone
(``benchmarks/results/stacking.md``). A blend learns ``n_blocks`` weights (and one
intercept per class) from the same cross-fitted scores, by log-loss, the way
super learners combine their base models.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from ._logistic import logistic_regression


def fitted_head(features, y, train, C, seed) -> tuple:
    """One fold's logistic regression at a chosen C: its weights, intercepts and the
    classes it saw."""
    head = logistic_regression(C, seed=seed).fit(features[train], y[train])
    return head.coef_, head.intercept_, head.classes_


def every_class(scores: np.ndarray, seen: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Scores of a model that saw some of ``classes`` only (a class with fewer documents
    than folds is missing from some folds' training part), one column per class: a class
    it never saw gets the lowest score it gives any class of these documents, as it has
    no evidence for it. ``(n, 1)`` scores of a model that saw two classes are the second
    class's against the first."""
    if len(seen) == len(classes):
        return scores
    if scores.shape[1] == 1 and len(seen) == 2:
        scores = np.hstack([-scores / 2, scores / 2])
    out = np.full((len(scores), len(classes)), scores.min())
    out[:, np.searchsorted(classes, seen)] = scores
    return out


def centred(features):
    """Dense features as float64 minus their mean (and the mean), sparse ones as CSR."""
    if sp.issparse(features):
        return sp.csr_matrix(features, dtype=np.float64), None
    features = np.asarray(features, dtype=np.float64)
    mean = features.mean(0)
    return features - mean, mean


def linear_scores(features, coef, intercept) -> np.ndarray:
    """``features @ coef.T + intercept``, each row on its own (a sparse product is row by
    row already; a dense one runs one row at a time on one BLAS thread), so that a
    document's scores never depend on its batch."""
    from .mixes.base import one_blas_thread, rowwise_product

    if sp.issparse(features):
        return np.asarray(features @ coef.T) + intercept
    with one_blas_thread():
        return rowwise_product(features, coef.T) + intercept


def stacked(parts):
    """The parts side by side: CSR if any is sparse."""
    if any(sp.issparse(part) for part in parts):
        return sp.hstack(parts, format="csr")
    return np.hstack(parts)


def _logits(scores: list[np.ndarray]) -> list[np.ndarray]:
    """Each block's scores as one logit per class: ``(n, 1)`` binary scores (the positive
    class's) become ``[0, s]``."""
    return [np.hstack([np.zeros_like(s), s]) if s.shape[1] == 1 else s for s in scores]


def fit_block_weights(scores: list[np.ndarray], y_index: np.ndarray) -> np.ndarray:
    """The non-negative weights ``a`` of ``softmax(sum_b a[b] * scores[b] + c)`` (``c``: an
    intercept per class) that minimise the log-loss of ``y_index``, divided by their sum
    (equal shares where every block's optimum is 0).

    Parameters
    ----------
    scores : list of ndarray of shape (n_documents, n_scores)
        Each block's cross-fitted scores (``n_scores``: 1 for two classes, else
        ``n_classes``).
    y_index : ndarray of shape (n_documents,)
        Each document's class, as an index into the classes.

    Returns
    -------
    weights : ndarray of shape (n_blocks,)
        Non-negative, summing to 1.
    """
    logits = _logits(scores)
    n, k = logits[0].shape
    b = len(logits)
    truth = np.zeros((n, k))
    truth[np.arange(n), y_index] = 1.0

    def loss(params):
        weights, intercepts = params[:b], params[b:]
        z = sum(w * s for w, s in zip(weights, logits)) + intercepts
        residual = (softmax(z, axis=1) - truth) / n
        gradient = np.r_[[np.sum(residual * s) for s in logits], residual.sum(0)]
        return -np.sum(truth * log_softmax(z, axis=1)) / n, gradient

    start = np.r_[np.full(b, 1.0 / b), np.zeros(k)]
    bounds = [(0.0, None)] * b + [(None, None)] * k
    weights = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds).x[:b]
    # shares summing to 1: the blend stays on its blocks' scale, which a classifier's
    # regularisation after it was chosen for; the optimum's scale (a temperature) is
    # the classifier's to learn
    total = weights.sum()
    return weights / total if total > 0 else np.full(b, 1.0 / b)


def blend(scores: list[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """``sum_b weights[b] * scores[b]``: ``(n_documents, n_scores)``."""
    return sum(w * s for w, s in zip(weights, scores))
