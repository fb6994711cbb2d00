"""The logistic regression that reads document features: C fixed, or chosen by inner
cross-validation over one grid. ``ElmoClassifier``'s head, the fine-tuning probe and
every row of the benchmark suite build it here. Plain Python at import: scikit-learn
loads when one is built."""

from __future__ import annotations

#: The C values a search chooses from: four and a half decades, so that no choice stops
#: at an end of the grid. ELMo features with the contextual bag chose 0.01, then the
#: bottom, on most splits of the short tasks (benchmarks/results/bag_own_bilm.md), and
#: the TF-IDF + ELMo hybrids 10 or 30, then the top: their features' rows are tens of
#: units long, TF-IDF's one.
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def logistic_regression(C: float | None = None, *, Cs=C_GRID, seed: int = 0,
                        class_weight=None, max_iter: int = 3000, n_jobs=None,
                        scoring: str = "accuracy"):
    """An unfitted ``LogisticRegression(C=C)`` or, with ``C=None``, a
    ``LogisticRegressionCV`` that chooses C from ``Cs`` by ``scoring`` (accuracy, or
    ``"neg_log_loss"`` where the scores themselves are used, not only the argmax) over
    stratified 3-fold cross-validation (shuffled with ``seed``) on the rows it is fitted
    on.

    On scikit-learn 1.9 and later the search states its coming defaults (``C_`` a float,
    an L2 penalty as ``l1_ratio`` 0), so that it warns nothing in the user's process.

    Examples
    --------
    >>> logistic_regression().Cs[:3], logistic_regression(C=10.0).C
    ([0.001, 0.003, 0.01], 10.0)
    """
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    if C is not None:
        return LogisticRegression(C=C, max_iter=max_iter, class_weight=class_weight,
                                  random_state=seed)
    settings = {}
    if "use_legacy_attributes" in LogisticRegressionCV().get_params():  # scikit-learn 1.9+
        settings.update(use_legacy_attributes=False, l1_ratios=(0.0,))
    return LogisticRegressionCV(Cs=list(Cs), cv=StratifiedKFold(3, shuffle=True, random_state=seed),
                                max_iter=max_iter, scoring=scoring, class_weight=class_weight,
                                random_state=seed, n_jobs=n_jobs, **settings)
