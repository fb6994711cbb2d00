"""Targets of the supervised layer mixes: checked before any pretraining, with
scikit-learn's semi-supervised convention (``-1`` marks an unlabelled document, as
:class:`~sklearn.semi_supervised.SelfTrainingClassifier` and ``LabelSpreading`` use).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import type_of_target

UNLABELLED = -1


@dataclass
class Targets:
    """Checked targets of a supervised mix.

    Attributes
    ----------
    y : ndarray of shape (n_documents,)
        As given (unlabelled documents keep their ``-1``).
    labelled : ndarray of int
        Indices of the labelled documents, the only ones a mix learns from.
    classification : bool
        Class labels (softmax head) rather than numeric targets (least squares).
    """

    y: np.ndarray
    labelled: np.ndarray
    classification: bool

    @property
    def y_labelled(self) -> np.ndarray:
        return self.y[self.labelled]

    @property
    def unlabelled(self) -> np.ndarray:
        """Indices of the documents with ``y == -1``."""
        return np.setdiff1d(np.arange(len(self.y)), self.labelled)


def _unlabelled_mask(y: np.ndarray) -> np.ndarray:
    if y.dtype.kind == "O":
        return np.fromiter((isinstance(v, Real) and not isinstance(v, bool) and v == UNLABELLED
                            for v in y), bool, len(y))
    if y.dtype.kind in "iuf":
        return y == UNLABELLED
    return np.zeros(len(y), dtype=bool)


def _first_missing(y: np.ndarray) -> int | None:
    missing = pd.isna(pd.Series(y, dtype=object)).to_numpy()
    return int(np.flatnonzero(missing)[0]) if missing.any() else None


def check_targets(y, n_documents: int) -> Targets:
    """Validate the labels of a supervised mix; raise a ``ValueError`` that says what is wrong.

    Class labels (binary or multiclass, numbers or strings) and numeric targets
    (continuous, single or multi-output) are accepted. For class labels, ``-1`` marks
    an unlabelled document; for continuous targets every value is a label.

    Examples
    --------
    >>> targets = check_targets([0, 1, -1, 1], 4)
    >>> targets.labelled.tolist(), targets.classification
    ([0, 1, 3], True)
    >>> check_targets([0, None, 1], 3)
    Traceback (most recent call last):
    ...
    ValueError: y[1] is missing (None); mark an unlabelled document with -1 instead
    """
    y = np.asarray(y)
    if y.ndim == 0 or len(y) != n_documents:
        n_labels = "a scalar" if y.ndim == 0 else f"{len(y)} labels"
        raise ValueError(f"X has {n_documents} documents but y has {n_labels}")
    if y.ndim > 2:
        raise ValueError(f"y must be 1-D (or 2-D numeric targets), got shape {y.shape}")
    missing = _first_missing(y.ravel()) if y.dtype.kind in "fO" else None
    if missing is not None:
        index = np.unravel_index(missing, y.shape)
        where = ", ".join(str(int(i)) for i in index)
        raise ValueError(f"y[{where}] is missing ({y[index]!r}); mark an unlabelled document "
                         "with -1 instead")
    if y.ndim == 2:
        if y.dtype.kind not in "iuf":
            raise ValueError(f"2-D y must hold numbers (one column per target), got {y.dtype}")
        return Targets(y, np.arange(n_documents), classification=False)
    kind = type_of_target(y) if y.dtype.kind != "O" else "multiclass"
    if kind not in ("binary", "multiclass", "continuous"):
        raise ValueError(f"y must be class labels or numeric targets, got {kind!r} targets")
    classification = kind != "continuous"
    unlabelled = _unlabelled_mask(y) if classification else np.zeros(len(y), dtype=bool)
    labelled = np.flatnonzero(~unlabelled)
    if classification and y.dtype.kind == "O":
        kinds = {type(v).__name__ for v in y[labelled]}
        if len(kinds) > 1 and not all(isinstance(v, Real) for v in y[labelled]):
            raise ValueError(f"y mixes label types ({', '.join(sorted(kinds))}); use one type, "
                             "and -1 for unlabelled documents")
    if len(labelled) == 0:
        raise ValueError("every document is unlabelled (y == -1): a supervised mix needs labels; "
                         "use layer_mix='frozen' to work without them")
    if classification and len(np.unique(y[labelled])) < 2:
        raise ValueError(f"y has a single class ({y[labelled][0]!r}) among the labelled documents: "
                         "a supervised mix needs at least two classes to learn from")
    return Targets(y, labelled, classification)


def fit_targets(y, n_documents: int, *, mix, layer_mix: str, fine_tune_epochs: int = 0,
                cv=None) -> Targets | None:
    """The labels ``ElmoVectorizer.fit`` learns from, checked before any pretraining:
    a :class:`Targets` where the mix (``mix.needs_labels``) or fine-tuning
    (``fine_tune_epochs`` with ``y``, class labels only) learns from them, else None
    (``y`` is still checked to have one label per document). ``cv``: the
    cross-fitting's folds, checked against the labels (None: no cross-fitting). A
    generator of labels is read once, as ``X`` is."""
    from ..mixes.crossfit import check_cross_fitting

    if y is not None and not hasattr(y, "__len__") and hasattr(y, "__iter__"):
        y = list(y)
    fine_tuning = bool(fine_tune_epochs) and y is not None
    if not (mix.needs_labels or fine_tuning):
        if y is not None:
            labels = np.asarray(y)
            if labels.ndim == 0 or len(labels) != n_documents:
                n_labels = "a scalar" if labels.ndim == 0 else f"{len(labels)} labels"
                raise ValueError(f"X has {n_documents} documents but y has {n_labels}")
        return None
    targets = check_targets(y, n_documents)
    if fine_tuning and not targets.classification:
        raise ValueError(
            f"fine_tune_epochs={fine_tune_epochs} fine-tunes the biLM as a classifier, but y "
            "holds numeric targets: give class labels, or set fine_tune_epochs=0")
    if cv is not None:
        check_cross_fitting(cv, targets, f"layer_mix={layer_mix!r}" if mix.needs_labels
                            else f"fine_tune_epochs={fine_tune_epochs}")
    return targets
