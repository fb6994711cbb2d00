"""Parameter checks shared by every estimator."""

from __future__ import annotations

import math
from numbers import Real

from sklearn.utils import check_scalar as _sklearn_check_scalar


def check_scalar(x, name, target_type, **bounds):
    """:func:`sklearn.utils.check_scalar`, which also rejects NaN and infinity.

    scikit-learn's check compares with the bounds only, and every comparison with NaN
    is false, so ``eig_weighting=nan`` passed and gave NaN features.

    Examples
    --------
    >>> check_scalar(0.5, "alpha", Real, min_val=0)
    0.5
    >>> check_scalar(float("nan"), "alpha", Real)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a finite number, got nan.
    """
    _sklearn_check_scalar(x, name, target_type, **bounds)
    if isinstance(x, Real) and not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x}.")
    return x
