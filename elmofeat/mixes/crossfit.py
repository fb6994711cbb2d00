"""Cross-fitting: the folds on which ``ElmoVectorizer.fit_transform`` learns a mix from
labels, so that each document's features come from a mix that did not see its label."""

from __future__ import annotations

from numbers import Integral

import numpy as np


def cross_fitting_folds(cv, targets, seed: int) -> list:
    """The (train, test) folds of the labelled documents for ``fit_transform``.

    An int ``cv`` gives shuffled ``StratifiedKFold`` (class labels) or ``KFold`` folds
    seeded with ``seed``; a splitter or an iterable of splits is used as given. Indices
    are positions in ``targets.labelled``.
    """
    from sklearn.model_selection import KFold, StratifiedKFold, check_cv

    if isinstance(cv, Integral):
        splitter_class = StratifiedKFold if targets.classification else KFold
        splitter = splitter_class(cv, shuffle=True, random_state=seed)
    else:
        splitter = check_cv(cv, targets.y_labelled, classifier=targets.classification)
    folds = list(splitter.split(np.zeros(len(targets.labelled)), targets.y_labelled))
    _check_partition(folds, len(targets.labelled))
    return folds


def check_cross_fitting(cv, targets, what: str) -> None:
    """Raise now, before any pretraining, where ``cv`` cannot split the labelled documents.
    ``what``: the setting that cross-fits, as the message names it
    (``"layer_mix='mlp'"``).

    An iterable of splits is used as given (reading it here would empty a generator).
    """
    import warnings

    n = len(targets.labelled)
    if isinstance(cv, Integral) and n < cv:
        raise ValueError(
            f"{what} is cross-fitted over cv={cv} folds of the labelled "
            f"documents, but y labels only {n} of them: label at least {cv} documents (as "
            "many of each class as folds, for stratified folds) or lower cv")
    if not isinstance(cv, Integral) and not hasattr(cv, "split"):
        return
    try:
        with warnings.catch_warnings():  # the real split warns, once
            warnings.simplefilter("ignore")
            cross_fitting_folds(cv, targets, 0)
    except ValueError as exc:
        raise ValueError(
            f"{what} is cross-fitted over the folds of cv={cv!r}, which "
            f"cannot split the {n} labelled documents: {exc}") from None


def _check_partition(folds, n_documents: int) -> None:
    """Cross-fitting gives each document the features of the one fold that holds it out:
    the test folds must cover every document exactly once (KFold does; ShuffleSplit
    would leave documents with no features at all)."""
    covered = np.zeros(n_documents, dtype=np.int64)
    for _, test in folds:
        np.add.at(covered, np.asarray(test, dtype=np.int64), 1)
    if (covered != 1).any():
        missing, repeated = int((covered == 0).sum()), int((covered > 1).sum())
        raise ValueError(
            f"cv must partition the labelled documents (each in exactly one test fold, as "
            f"KFold and StratifiedKFold do): {missing} are in no test fold and {repeated} in "
            "several, so fit_transform could not give them out-of-fold features"
        )
