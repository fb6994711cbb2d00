"""Parameter checks shared by every estimator."""

from __future__ import annotations

import math
from numbers import Integral, Real  # noqa: F401 (Integral: the doctest)

import numpy as np

from sklearn.utils import check_scalar as _sklearn_check_scalar


def check_scalar(x, name, target_type, **bounds):
    """:func:`sklearn.utils.check_scalar`, which also rejects NaN, infinity and booleans.

    scikit-learn's check compares with the bounds only, and every comparison with NaN
    is false, so ``eig_weighting=nan`` passed and gave NaN features. ``True`` is an
    ``Integral`` to Python, so ``n_threads=True`` passed as 1 (and crashed in torch).

    Examples
    --------
    >>> check_scalar(0.5, "alpha", Real, min_val=0)
    0.5
    >>> check_scalar(float("nan"), "alpha", Real)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a finite number, got nan.
    >>> check_scalar(True, "n_threads", Integral, min_val=1)
    Traceback (most recent call last):
    ...
    TypeError: n_threads must be a number, got the boolean True.
    """
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got the boolean {x}.")
    _sklearn_check_scalar(x, name, target_type, **bounds)
    if isinstance(x, Real) and not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x}.")
    return x
