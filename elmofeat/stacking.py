"""Stacked generalisation over blocks of document features: each block's own logistic
regression, its cross-fitted class scores the features that a classifier combines.

``make_hybrid`` puts TF-IDF and ELMo features side by side under one regularisation
strength and a fixed block weight; a sparse block of tens of thousands of counts and a
dense one of thousands of columns want different ones, and the union scored below the
better of its own blocks on most tasks (issue 72). Here each block gets its own model
and its own C, and its cross-fitted class scores are blended with one weight per block,
learned from labels (:mod:`elmofeat._block_scores` says why one weight, not one per
class): stacked generalisation as scikit-learn's ``StackingClassifier`` does it, but as
a transformer, so that any classifier follows it in a Pipeline.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ._block_scores import (blend, centred, every_class, fit_block_weights, fitted_head,
                            linear_scores, stacked)
from ._logistic import logistic_regression
from ._param_validation import Interval, StrOptions, fit_context
from .text import read_once, validate_documents

#: The label-free fallback's weight of every block after the first (``make_hybrid``'s
#: weight of its ELMo block beside TF-IDF at 1).
LABEL_FREE_WEIGHT = 0.2


def _default_blocks() -> list:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from .elmo.vectorizer import ElmoVectorizer

    return [("tfidf", TfidfVectorizer(sublinear_tf=True)), ("elmo", ElmoVectorizer())]


class StackingVectorizer(TransformerMixin, BaseEstimator):
    """Blocks of document features combined by what each knows: a logistic regression
    per block, with its own C, and their class scores, blended, as the features.

    ``fit_transform(X, y)`` returns, for each training document, the scores of models
    that did not see its label (cross-fitted over ``cv`` folds, as scikit-learn's
    :class:`~sklearn.preprocessing.TargetEncoder`); ``transform`` returns the scores of
    the models fitted on every training document. Each block's weight in the blend is
    learned from the cross-fitted scores, so a block that knows nothing about a task
    gets little weight instead of diluting the others; a classifier after it (a
    ``LogisticRegression`` in a Pipeline) reads one score per class. Without ``y`` there is nothing to score: ``fit(X)`` falls back to
    ``make_hybrid``'s label-free union (each dense block centred and scaled to unit
    norm per document, weighted, beside the sparse ones as they are).

    Parameters
    ----------
    blocks : list of (str, estimator), default=None
        The blocks, by name. A transformer (``TfidfVectorizer``, ``ElmoVectorizer``,
        ``SVDVectorizer``, a Pipeline...) gives features, sparse or dense, which a
        logistic regression reads (dense ones centred on the training documents); a
        classifier (``ElmoClassifier``...) gives its own scores (``decision_function``,
        else ``predict_proba``), cross-fitted by refitting a clone on each fold. None:
        ``[("tfidf", TfidfVectorizer(sublinear_tf=True)), ("elmo", ElmoVectorizer())]``.
    C : float, default=None
        Inverse regularisation of every block's logistic regression; None: chosen per
        block by log-loss (the scores are the features, so their scale counts, not only
        their argmax, and accuracy ties on an easy block would pick the weakest
        model) over stratified 3-fold cross-validation on all the training
        documents, from :data:`elmofeat._logistic.C_GRID` (chosen once, then used for
        each fold's model too: the folds' scores are out-of-fold in their weights, not
        in that one number).
    combine : {"blend", "scores"}, default="blend"
        What the features are, given labels. ``"blend"``: one score per class (one for
        two classes), the blocks' scores summed with a non-negative weight per block,
        the weights fitted by log-loss on the cross-fitted scores (so ``fit`` cross-fits
        too). ``"scores"``: every block's scores side by side, for the classifier after
        it to weigh; it learns ``n_classes`` weights per block and class, which few
        documents per class cannot pin down (20 Newsgroups at 30 posts a class:
        below the TF-IDF block alone). Old pickles, made before this parameter, load
        with ``"scores"``, what they computed.
    cv : int, cross-validation generator or iterable, default=5
        The folds of ``fit_transform``'s scores: an int gives shuffled
        ``StratifiedKFold`` folds seeded by ``random_state``. With two classes, both must
        be in every fold's training part. With more, a class with fewer documents than
        folds is missing from some (a ``UserWarning`` says so): the models of those folds
        give it the lowest score they give any class of their held-out documents; where
        every class has fewer documents than ``cv``, as many folds as the largest class
        has documents.
    weights : dict of str to float, default=None
        The label-free fallback only: each block's weight (None: 1 for the first block,
        0.2 for the others, ``make_hybrid``'s).
    n_jobs : int, default=None
        Processes of each block's C search and of its cross-fitted folds (joblib's
        convention): it changes where the models fit, not what they learn (to rounding).
    random_state : int, RandomState instance or None, default=None
        Seeds the folds and the solvers; None gives fixed seeds, so that the same data
        gives the same features.

    Attributes
    ----------
    blocks_ : list of (str, estimator)
        The fitted blocks (clones of ``blocks``).
    supervised_ : bool
        Whether ``fit`` had labels (scores) or not (the label-free union).
    classes_ : ndarray of shape (n_classes,)
        The class labels (supervised only).
    coefs_, intercepts_ : dict of str to ndarray
        The weights ``(n_scores, n_block_features)`` and intercepts ``(n_scores,)`` of
        each transformer block's logistic regression, fitted on every training document
        (supervised only; ``n_scores`` is 1 for two classes).
    C_ : dict of str to float
        The C of each transformer block's logistic regression (supervised only).
    block_weights_ : dict of str to float
        Each block's weight in the blend (``combine="blend"`` with labels only).
    means_ : dict of str to ndarray or None
        The training mean of each dense block's features (None for a sparse block).

    See Also
    --------
    make_hybrid : TF-IDF and ELMo features side by side, under one C.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> texts = ["good match , great goal", "stocks fell , markets down"] * 10
    >>> labels = ["sport", "business"] * 10
    >>> stack = StackingVectorizer([("words", TfidfVectorizer()),
    ...                             ("counts", CountVectorizer(binary=True))], cv=2)
    >>> stack.fit_transform(texts, labels).shape  # one blended score (two classes)
    (20, 1)
    >>> stack.get_feature_names_out().tolist()
    ['blend__sport']
    >>> sorted(stack.block_weights_)
    ['counts', 'words']
    >>> model = make_pipeline(stack, LogisticRegression()).fit(texts, labels)
    >>> model.predict(["a great goal"]).tolist()
    ['sport']
    """

    _parameter_constraints: dict = {
        "blocks": [list, None],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "combine": [StrOptions({"blend", "scores"})],
        "cv": ["cv_object"],
        "weights": [dict, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, blocks=None, *, C=None, combine="blend", cv=5, weights=None,
                 n_jobs=None, random_state=None):
        self.blocks = blocks
        self.C = C
        self.combine = combine
        self.cv = cv
        self.weights = weights
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __setstate__(self, state):
        # pickled before combine existed: every block's scores, what it computed then
        super().__setstate__({"combine": "scores", **state})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags

    # -- parameters of the blocks, as FeatureUnion's ----------------------------------
    def get_params(self, deep=True) -> dict:
        """This estimator's parameters; with ``deep``, also each block by its name and
        the block's own parameters as ``"<name>__<parameter>"`` (so that ``GridSearchCV``
        searches inside a block, as in a ``FeatureUnion``)."""
        params = super().get_params(deep=False)
        if deep and self.blocks is not None:
            for name, estimator in self.blocks:
                params[name] = estimator
                for key, value in estimator.get_params(deep=True).items():
                    params[f"{name}__{key}"] = value
        return params

    def set_params(self, **params):
        """Set parameters: this estimator's, a block by its name (replaced), or a block's
        own as ``"<name>__<parameter>"``."""
        own = {key: params.pop(key) for key in list(params) if key in self._parameter_constraints}
        super().set_params(**own)
        if not params:
            return self
        # a block of the default set is set by name too (the set built first)
        blocks = list(_default_blocks() if self.blocks is None else self.blocks)
        names = [name for name, _ in blocks]
        nested: dict = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in names:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}: "
                                 f"neither its own nor of a block (blocks: {names})")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                blocks[names.index(name)] = (name, value)
        for name, values in nested.items():
            blocks[names.index(name)][1].set_params(**values)
        self.blocks = blocks
        return self

    # -- checks --------------------------------------------------------------------
    def _checked_blocks(self) -> list:
        blocks = _default_blocks() if self.blocks is None else self.blocks
        if not blocks:
            raise ValueError("blocks is empty: give at least one (name, estimator) pair")
        names = []
        for entry in blocks:
            if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str)):
                raise TypeError(f"blocks must be (name, estimator) pairs, got {entry!r}")
            name, estimator = entry
            if not name or "__" in name:
                raise ValueError(f"block name {name!r} must be non-empty and free of '__' "
                                 "(scikit-learn's parameter separator)")
            if not hasattr(estimator, "fit"):
                raise TypeError(f"block {name!r} has no fit method: {estimator!r}")
            if not is_classifier(estimator) and not hasattr(estimator, "transform"):
                raise TypeError(f"block {name!r} is neither a transformer nor a classifier: "
                                f"{estimator!r}")
            names.append(name)
        if len(set(names)) < len(names):
            raise ValueError(f"block names must be unique, got {names}")
        return blocks

    def _seed(self) -> int:
        from sklearn.utils import check_random_state

        if self.random_state is None:
            return 0
        return int(check_random_state(self.random_state).randint(2**31 - 1))

    def _folds(self, y: np.ndarray, seed: int) -> list:
        from .elmo.labels import Targets
        from .mixes.crossfit import cross_fitting_folds

        binary = len(np.unique(y)) == 2
        counts = np.unique(y, return_counts=True)
        cv = self.cv
        if isinstance(cv, Integral) and not binary and counts[1].max() < cv:
            # stratified folds cannot outnumber the largest class's documents
            if counts[1].max() < 2:
                raise ValueError(f"every class has 1 document: cv={cv} cross-fitting needs a "
                                 "class with 2 or more")
            warnings.warn(f"every class has fewer than cv={cv} documents: "
                          f"{counts[1].max()} folds instead", UserWarning, stacklevel=4)
            cv = int(counts[1].max())
        if isinstance(self.cv, Integral) and counts[1].min() < cv:
            rare = counts[0][np.argmin(counts[1])].item()
            problem = (f"class {rare!r} has {counts[1].min()} documents, fewer than "
                       f"cv={cv}")
            if binary:
                raise ValueError(f"{problem}: with two classes, the cross-fitted scores need "
                                 "both in every fold's training part; lower cv or label more "
                                 "documents")
            warnings.warn(f"{problem}: the folds that train without it give it the lowest "
                          "score of their model", UserWarning, stacklevel=4)
        with warnings.catch_warnings():
            # said above, in this estimator's words
            warnings.filterwarnings("ignore", "The least populated class", UserWarning)
            folds = cross_fitting_folds(cv, Targets(y, np.arange(len(y)), True), seed)
        for train, _ in folds:
            seen = np.unique(y[train])
            if len(seen) < len(counts[0]) and (binary or len(seen) < 2):
                raise ValueError(f"a fold of cv={self.cv!r} trains without class "
                                 f"{np.setdiff1d(counts[0], seen)[0].item()!r}: "
                                 + ("with two classes both must be in every fold's training "
                                    "part" if binary else "a fold must train on two classes"))
        return folds

    # -- fitting -------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the blocks and, given labels, each block's model on every document.

        Parameters
        ----------
        X : iterable of str
        y : array-like of shape (n_documents,), default=None
            Class labels; None: the label-free union.

        Returns
        -------
        self : StackingVectorizer
        """
        self._fit(X, y, cross_fit=False)
        return self

    @fit_context(prefer_skip_nested_validation=False)
    def fit_transform(self, X, y=None):
        """Fit, and return each training document's features: with labels, the scores of
        models fitted without it (cross-fitted); without, the label-free union.

        Returns
        -------
        features : ndarray of shape (n_documents, n_features_out)
            A sparse matrix for the label-free union of a sparse block.
        """
        return self._fit(X, y, cross_fit=True)

    def _fit(self, X, y, *, cross_fit: bool):
        blocks = self._checked_blocks()
        documents = validate_documents(read_once(X))
        if not documents:
            raise ValueError("X is empty: fit needs at least one document")
        if y is not None:
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != len(documents):
                raise ValueError(f"X has {len(documents)} documents but y has shape "
                                 f"{y.shape}: give one class label per document")
            check_classification_targets(y)
            if len(np.unique(y)) < 2:
                raise ValueError(f"y has a single class ({y[0]!r}): the blocks' scores need "
                                 "at least two")
        self.supervised_ = y is not None
        if not self.supervised_:
            return self._fit_label_free(blocks, documents, cross_fit)
        return self._fit_supervised(blocks, documents, y, cross_fit)

    def _fit_label_free(self, blocks, documents, cross_fit):
        for name, estimator in blocks:
            if is_classifier(estimator):
                raise ValueError(f"block {name!r} is a classifier: it needs labels "
                                 "(fit(X, y)); the label-free union takes transformers only")
        weights = {name: 1.0 if i == 0 else LABEL_FREE_WEIGHT
                   for i, (name, _) in enumerate(blocks)}
        unknown = set(self.weights or {}) - set(weights)
        if unknown:
            raise ValueError(f"weights names blocks that do not exist: {sorted(unknown)}; "
                             f"the blocks are {list(weights)}")
        weights.update({name: float(w) for name, w in (self.weights or {}).items()})
        self.weights_ = weights
        self.blocks_, self.means_ = [], {}
        parts = []
        for name, estimator in blocks:
            fitted = clone(estimator)
            features = fitted.fit_transform(documents)
            self.blocks_.append((name, fitted))
            self.means_[name] = None if sp.issparse(features) else np.asarray(
                features, dtype=np.float64).mean(0)
            parts.append(self._label_free_part(name, features))
        for attribute in ("classes_", "coefs_", "intercepts_", "C_", "block_weights_"):
            self.__dict__.pop(attribute, None)
        return stacked(parts) if cross_fit else None

    def _label_free_part(self, name, features):
        weight = self.weights_[name]
        if sp.issparse(features):
            return sp.csr_matrix(features, dtype=np.float64) * weight
        dense = np.asarray(features, dtype=np.float64) - self.means_[name]
        norms = np.linalg.norm(dense, axis=1, keepdims=True)
        return dense / np.where(norms > 0, norms, 1.0) * weight

    def _fit_supervised(self, blocks, documents, y, cross_fit):
        seed = self._seed()
        # the blend's weights are learned from scores of models that did not see the
        # document: fit cross-fits too
        cross_fit = cross_fit or self.combine == "blend"
        folds = self._folds(y, seed) if cross_fit else None
        self.classes_ = np.unique(y)
        self.blocks_, self.means_, self.C_, self.coefs_, self.intercepts_ = [], {}, {}, {}, {}
        scores = []
        for name, estimator in blocks:
            if is_classifier(estimator):
                fitted = clone(estimator).fit(documents, y)
                self.means_[name] = None
                if cross_fit:
                    scores.append(self._cross_fitted_classifier(estimator, documents, y, folds))
            else:
                fitted = clone(estimator)
                features = fitted.fit_transform(documents, y)
                features, self.means_[name] = centred(features)
                search = logistic_regression(self.C, seed=seed, n_jobs=self.n_jobs,
                                             scoring="neg_log_loss")
                search.fit(features, y)
                self.coefs_[name], self.intercepts_[name] = search.coef_, search.intercept_
                self.C_[name] = float(np.ravel(getattr(search, "C_", self.C))[0])
                if cross_fit:
                    scores.append(self._cross_fitted_head(name, features, y, folds, seed))
            self.blocks_.append((name, fitted))
        self.__dict__.pop("weights_", None)
        self.__dict__.pop("block_weights_", None)
        if self.combine == "blend":
            weights = fit_block_weights(scores, np.searchsorted(self.classes_, y))
            self.block_weights_ = {name: float(w) for (name, _), w in zip(blocks, weights)}
            return blend(scores, weights)
        return np.hstack(scores) if cross_fit else None

    def _cross_fitted_head(self, name, features, y, folds, seed) -> np.ndarray:
        from joblib import Parallel, delayed

        # the folds' models in n_jobs processes (their C is chosen already); the scores
        # are computed here, row by row, as transform computes them
        heads = Parallel(n_jobs=self.n_jobs)(
            delayed(fitted_head)(features, y, train, self.C_[name], seed) for train, _ in folds)
        out = np.empty((len(y), self._width()))
        for (_, test), (coef, intercept, seen) in zip(folds, heads):
            out[test] = every_class(linear_scores(features[test], coef, intercept), seen,
                                    self.classes_)
        return out

    def _cross_fitted_classifier(self, estimator, documents, y, folds) -> np.ndarray:
        out = np.empty((len(y), self._width()))
        for train, test in folds:
            model = clone(estimator).fit([documents[i] for i in train], y[train])
            seen = np.unique(y[train])
            out[test] = every_class(self._classifier_scores(model, [documents[i] for i in test],
                                                            len(seen)), seen, self.classes_)
        return out

    def _width(self) -> int:
        """Columns per block: one score for two classes, one per class otherwise."""
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def _classifier_scores(self, model, documents, n_classes=None) -> np.ndarray:
        """A classifier's scores of ``documents``: one column for two classes (``n_classes``,
        those it was fitted on; None: all), one per class otherwise."""
        n_classes = len(self.classes_) if n_classes is None else n_classes
        if hasattr(model, "decision_function"):
            scores = np.asarray(model.decision_function(documents), dtype=np.float64)
        else:
            scores = np.asarray(model.predict_proba(documents), dtype=np.float64)
            scores = scores[:, 1] if n_classes == 2 else scores
        return scores.reshape(len(documents), 1 if n_classes == 2 else n_classes)

    # -- transforming --------------------------------------------------------------
    def transform(self, X):
        """Each document's features: the blocks' scores, or the label-free union.

        Parameters
        ----------
        X : iterable of str

        Returns
        -------
        features : ndarray of shape (n_documents, n_features_out)
            A document's features do not depend on the other documents of ``X``.
        """
        check_is_fitted(self, "blocks_")
        documents = validate_documents(X)
        parts = []
        for name, fitted in self.blocks_:
            if self.supervised_ and is_classifier(fitted):
                parts.append(self._classifier_scores(fitted, documents))
                continue
            features = fitted.transform(documents)
            if not self.supervised_:
                parts.append(self._label_free_part(name, features))
                continue
            if self.means_[name] is not None:
                features = np.asarray(features, dtype=np.float64) - self.means_[name]
            parts.append(linear_scores(features, self.coefs_[name], self.intercepts_[name]))
        if self.supervised_ and hasattr(self, "block_weights_"):
            return blend(parts, list(self.block_weights_.values()))
        return stacked(parts)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """``"blend__<class>"`` (the positive class alone for two classes), or with
        ``combine="scores"`` ``"<block>__<class>"`` per block, or, label-free,
        ``"<block>__<feature>"`` per block feature."""
        check_is_fitted(self, "blocks_")
        classes = getattr(self, "classes_", None)
        if classes is not None and len(classes) == 2:
            classes = classes[1:]
        if self.supervised_ and hasattr(self, "block_weights_"):
            return np.asarray([f"blend__{label}" for label in classes], dtype=object)
        names = []
        for name, fitted in self.blocks_:
            if self.supervised_:
                names += [f"{name}__{label}" for label in classes]
            else:
                names += [f"{name}__{feature}" for feature in fitted.get_feature_names_out()]
        return np.asarray(names, dtype=object)
