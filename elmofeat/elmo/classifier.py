"""ElmoClassifier: the biLM fine-tuned end to end on labelled texts, as a classifier."""

from __future__ import annotations

import os

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import fine_tuning as _fine_tuning
from .resolution import resolve_bilm
from .._base import TextEstimatorMixin
from .._logistic import logistic_regression
from .._param_validation import (Integral, Interval, Real, StrOptions, TorchDevices,
                                fit_context, positive_int)
from ..bilm import BiLM
from ..runtime.threads import N_THREADS_CONSTRAINTS, ThreadPolicy
from ..text import read_once, validate_documents


class ElmoClassifier(TextEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A biLM fine-tuned on labelled texts, read by a linear head: ULMFiT's recipe as a
    scikit-learn classifier.

    ``fit`` takes a copy of the pretrained biLM (adapted to ``X`` first with
    ``adapt_epochs``) and fine-tunes it on ``(X, y)``
    (:func:`elmofeat.bilm.finetune.fine_tune`): a linear probe on its frozen
    concat-pooled features (each layer's mean and max over the tokens and the top
    layer's last states, standardised; LP-FT: fine-tuning never starts below the
    probe), then that head, the LSTM and the token layers trained together under a
    slanted triangular schedule, with discriminative learning rates (each layer down
    the stack ``decay`` times slower) and optionally gradual unfreezing. The word table
    stays as it is. Then the fine-tuned biLM's document features, as
    ``ElmoVectorizer``'s defaults pool them (every window of a long text, the
    contextual bag), are read by a logistic regression (C chosen by inner
    cross-validation): the fine-tuning's own head saw each text's first window only,
    and on long texts it reads them worse than the vectorizer's pooling
    (``benchmarks/results/fine_tuning.md``). ``ElmoVectorizer(fine_tune_epochs=...)``
    shares this implementation and its in-process cache of fine-tuned models. What it
    buys and costs against ``ElmoVectorizer`` + ``LogisticRegression``:
    ``docs/choosing_features.md``.

    Parameters
    ----------
    bilm : BiLM, str or path, default="en-base"
        A pretrained model's name or path, or a fitted ``BiLM`` (never changed: a copy
        is fine-tuned); an unfitted ``BiLM`` or None is pretrained on ``X`` first, as in
        :class:`~elmofeat.ElmoVectorizer`.
    adapt_epochs : int, default=0
        Continue the pretrained biLM's language-model training on ``X`` first
        (ULMFiT's second stage), as ``ElmoVectorizer``'s ``adapt_epochs``.
    epochs : int, default=3
        Passes of fine-tuning over the training texts.
    learning_rate : float, default=1e-3
        The head's peak learning rate; each layer down the stack gets ``decay`` times
        less.
    decay : float, default=2.6
    gradual_unfreezing : bool, default=True
        Train the head and the top LSTM layer first, one more layer each epoch.
    dropout : float, default=0.1
        On the pooled vector.
    C : float or None, default=None
        Inverse regularisation of the linear probe that fine-tuning starts from and of
        the final head; None chooses each by stratified 3-fold cross-validation (the
        head's over :data:`elmofeat._logistic.C_GRID`).
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows and keep the epoch (the probe
        included) with the lowest held-out loss; False trains on every row and keeps
        the last epoch.
    validation_fraction : float, default=0.1
    batch_size : int, default=32
        Texts per training step; each is read as its first ``max_len`` tokens (the
        biLM's window) for training, and whole for prediction.
    class_weight : dict, "balanced" or None, default=None
        As ``LogisticRegression``'s: weights of the classes in the loss and the probe.
    device : str, default="auto"
        Where a biLM pretrained on ``X`` trains (as ``ElmoVectorizer``'s); fine-tuning
        runs where the biLM is.
    cache_dir : "auto", None or path, default="auto"
        Where pretrained and adapted biLMs are shared (as ``ElmoVectorizer``'s);
        fine-tuned models are shared in this process only.
    n_jobs : int or None, default=None
        Processes of the head's search over C (``LogisticRegressionCV``'s ``n_jobs``).
    n_threads : int, "auto" or None, default=None
        torch threads, as ``ElmoVectorizer``'s.
    random_state : int, RandomState instance or None, default=None
        Seeds fine-tuning (the probe's folds, dropout, the order of the batches), the
        vectorizer's draws (the bag's sample), the head's folds, and an adaptation or
        pretraining; None fixes every seed (the same texts and labels, the same model:
        the candidates of a search share it), as ``ElmoVectorizer``'s label-free draws.
    verbose : bool, default=False
        Progress bars with time left (pretraining, adaptation, fine-tuning).

    Attributes
    ----------
    bilm_ : BiLM
        The fine-tuned biLM (the pretrained one where no epoch beat the probe, with
        ``early_stopping``).
    vectorizer_ : ElmoVectorizer
        Fitted on ``X`` over ``bilm_`` (its defaults otherwise): the document features
        the head reads.
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The head's weights on ``vectorizer_``'s features (one row for two classes, as
        ``LogisticRegression``'s).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    C_ : float
        The head's C (chosen, or ``C``).
    history_ : list of dict
        One record per epoch of fine-tuning (epoch 0: the probe).
    best_epoch_ : int

    Examples
    --------
    >>> from elmofeat import BiLM, ElmoClassifier
    >>> texts = ["a great phone , i love it", "awful , it broke at once"] * 20
    >>> y = ["good", "bad"] * 20
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> clf = ElmoClassifier(bilm, epochs=2, random_state=0).fit(texts, y)
    >>> clf.classes_.tolist(), clf.predict(["i love it"]).shape
    (['bad', 'good'], (1,))
    >>> clf.predict_proba(["awful"]).shape
    (1, 2)
    """

    _stamped_packages = TextEstimatorMixin._stamped_packages + ("torch",)

    def __init__(self, bilm="en-base", *, adapt_epochs=0, epochs=3, learning_rate=1e-3,
                 decay=2.6, gradual_unfreezing=True, dropout=0.1, C=None,
                 early_stopping=False, validation_fraction=0.1, batch_size=32,
                 class_weight=None, device="auto", cache_dir="auto", n_jobs=None,
                 n_threads=None, random_state=None, verbose=False):
        self.bilm = bilm
        self.adapt_epochs = adapt_epochs
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.decay = decay
        self.gradual_unfreezing = gradual_unfreezing
        self.dropout = dropout
        self.C = C
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.batch_size = batch_size
        self.class_weight = class_weight
        self.device = device
        self.cache_dir = cache_dir
        self.n_jobs = n_jobs
        self.n_threads = n_threads
        self.random_state = random_state
        self.verbose = verbose

    _parameter_constraints: dict = {
        "bilm": [BiLM, str, os.PathLike, None],
        "adapt_epochs": [positive_int(0)],
        "epochs": [positive_int()],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "decay": [Interval(Real, 1, None, closed="left")],
        "gradual_unfreezing": ["boolean"],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "batch_size": [positive_int()],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "device": [TorchDevices()],
        "cache_dir": [str, os.PathLike, None],
        "n_jobs": [Integral, None],
        "n_threads": N_THREADS_CONSTRAINTS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __sklearn_clone__(self):
        # a fitted biLM is shared by clones (as ElmoVectorizer's), not copied
        from sklearn.base import clone

        from .resolution import is_fitted_bilm

        params = self.get_params(deep=False)
        if not is_fitted_bilm(self.bilm):
            params["bilm"] = clone(self.bilm, safe=False)
        return type(self)(**params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        tags.target_tags.required = True
        return tags

    def _seeds(self) -> tuple[int, int, int | None]:
        """Seeds of fine-tuning, of the head's folds and of the vectorizer's label-free
        draws: fixed where ``random_state`` is None (the same texts and labels, the same
        model: the candidates of a search share it)."""
        if self.random_state is None:
            return 0, 0, None
        tune, head, vectorizer = check_random_state(self.random_state).randint(2**31 - 1, size=3)
        return int(tune), int(head), int(vectorizer)

    def _settings(self, seed: int) -> dict:
        """``fine_tune``'s settings: every one that changes the model (the cache key)."""
        return _fine_tuning.recipe(
            self.epochs, seed, learning_rate=float(self.learning_rate), decay=float(self.decay),
            gradual_unfreezing=bool(self.gradual_unfreezing), dropout=float(self.dropout),
            probe_C=None if self.C is None else float(self.C),
            early_stopping=bool(self.early_stopping),
            validation_fraction=float(self.validation_fraction),
            batch_size=int(self.batch_size), class_weight=self.class_weight)

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fine-tune a copy of the biLM and the head on ``(X, y)``.

        Parameters
        ----------
        X : iterable of str
        y : array-like of shape (n_documents,)
            Class labels (strings or numbers; at least two classes).

        Returns
        -------
        self : ElmoClassifier
        """
        from .vectorizer import ElmoVectorizer

        documents = validate_documents(read_once(X))
        if not documents:
            raise ValueError("X is empty: fit needs at least one document")
        if y is None:
            raise ValueError("ElmoClassifier needs class labels: fit(X, y)")
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(documents):
            raise ValueError(f"X has {len(documents)} documents but y has shape {y.shape}: "
                             "give one class label per document")
        check_classification_targets(y)
        if len(np.unique(y)) < 2:
            raise ValueError(f"y has a single class ({y[0]!r}): a classifier needs at least "
                             "two")
        tune_seed, head_seed, vectorizer_seed = self._seeds()
        with ThreadPolicy(self.n_threads, training=True).applied() as threads:
            # the biLM as ElmoVectorizer resolves it: loaded, pretrained or adapted, cached
            base = resolve_bilm(self, documents, check_random_state(self.random_state),
                                threads)
            tuned = _fine_tuning.FINE_TUNED.get(base, documents, y, self._settings(tune_seed),
                                                 verbose=bool(self.verbose))
        self.bilm_ = tuned.bilm
        self.history_ = [dict(record) for record in tuned.history]
        self.best_epoch_ = int(tuned.best_epoch)
        # the head reads the vectorizer's pooling of the fine-tuned biLM (every window,
        # the bag), not the first-window concat pooling fine-tuning trained on
        self.vectorizer_ = ElmoVectorizer(self.bilm_, cache_dir=None, n_threads=self.n_threads,
                                          random_state=vectorizer_seed, verbose=self.verbose)
        features = self.vectorizer_.fit_transform(documents).astype(np.float64)
        mean = features.mean(0)  # centred: the solver converges in far fewer iterations
        head = logistic_regression(None if self.C is None else float(self.C), seed=head_seed,
                                   class_weight=self.class_weight,
                                   n_jobs=self.n_jobs).fit(features - mean, y)
        self.classes_ = head.classes_
        self.coef_ = head.coef_.copy()
        # the same scores on uncentred features: the mean folded into the intercept
        self.intercept_ = head.intercept_ - self.coef_ @ mean
        self.C_ = float(np.ravel(getattr(head, "C_", self.C))[0])
        return self

    def _scores(self, X) -> np.ndarray:
        """``(n_documents, n_classes)``, or ``(n_documents, 1)`` for two classes: each
        row's own product (:func:`~elmofeat.mixes.base.rowwise_product`, one BLAS
        thread), so that a document's scores never depend on its batch."""
        from ..mixes.base import one_blas_thread, rowwise_product

        check_is_fitted(self, "coef_")
        features = self.vectorizer_.transform(validate_documents(X)).astype(np.float64)
        with one_blas_thread():
            return rowwise_product(features, self.coef_.T) + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        """Class scores: ``(n_documents,)`` for two classes (the second class's score
        minus the first's, as scikit-learn's linear classifiers), ``(n_documents,
        n_classes)`` otherwise. A document's scores do not depend on the others."""
        scores = self._scores(X)
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities ``(n_documents, n_classes)``, as ``LogisticRegression``'s
        (the logistic of the score for two classes, a softmax otherwise)."""
        from scipy.special import expit, softmax

        scores = self._scores(X)
        if len(self.classes_) == 2:
            positive = expit(scores[:, 0])
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X) -> np.ndarray:
        from scipy.special import log_expit, log_softmax

        scores = self._scores(X)
        if len(self.classes_) == 2:
            return np.column_stack([log_expit(-scores[:, 0]), log_expit(scores[:, 0])])
        return log_softmax(scores, axis=1)

    def predict(self, X) -> np.ndarray:
        """The most likely class of each document."""
        scores = self._scores(X)
        if len(self.classes_) == 2:
            return self.classes_[(scores[:, 0] > 0).astype(int)]
        return self.classes_[scores.argmax(1)]
