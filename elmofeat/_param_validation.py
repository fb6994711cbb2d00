"""scikit-learn's declarative parameter validation, behind one private import.

Estimators declare ``_parameter_constraints`` (parameter name -> list of accepted
constraints) and decorate ``fit`` with :func:`fit_context`, as scikit-learn's own do
(``preprocessing/_target_encoder.py``). Both tools live in private scikit-learn modules:
this is the one place elmofeat imports them from, so a change there is met here.

Two constraints are elmofeat's own: :class:`Interval` also refuses booleans and
infinite values (``True`` is an ``Integral`` to Python, and ``n_threads=True`` used to
reach torch as 1), :class:`Dtypes` accepts anything ``numpy.dtype`` turns into one of a
few float types, and :class:`TorchDevices` the device strings torch understands. Checks that span parameters stay in code, in each estimator's
``_check_params_together``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils._param_validation import Options, StrOptions
from sklearn.utils._param_validation import validate_parameter_constraints

__all__ = ["Dtypes", "Integral", "Interval", "Options", "Real", "StrOptions", "TorchDevices",
           "fit_context", "positive_int", "validate_parameter_constraints"]


def fit_context(*, prefer_skip_nested_validation: bool):
    """scikit-learn's ``_fit_context``: validate the parameters, then run ``fit``.

    ``prefer_skip_nested_validation=False`` for estimators that fit other estimators
    given as parameters (``ElmoVectorizer`` fits its ``BiLM``), so that theirs are
    checked too.
    """
    return _fit_context(prefer_skip_nested_validation=prefer_skip_nested_validation)


class Interval(_Interval):
    """scikit-learn's ``Interval`` without booleans, NaN or infinities.

    Examples
    --------
    >>> Interval(Integral, 1, None, closed="left").is_satisfied_by(True)
    False
    >>> Interval(Real, 0, None, closed="left").is_satisfied_by(float("inf"))
    False
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        if isinstance(val, Real) and not math.isfinite(val):
            return False
        return super().is_satisfied_by(val)


class Dtypes(Options):
    """Anything ``numpy.dtype`` makes into one of ``names`` (``np.float32``, ``"float32"``...).

    (An ``Options`` subclass: scikit-learn accepts only its own constraint classes.)
    """

    def __init__(self, names):
        super().__init__(object, set(names))

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)) or val is None:
            return False
        try:
            return np.dtype(val).name in self.options
        except TypeError:
            return False

    def __str__(self):
        return f"a dtype among {sorted(self.options)}"


class TorchDevices(Options):
    """``"auto"`` or a device string torch understands (``"cpu"``, ``"cuda:1"``...)."""

    def __init__(self):
        super().__init__(object, {"auto"})

    def is_satisfied_by(self, val):
        from ._torch import check_device

        try:
            check_device(val)
        except (TypeError, ValueError):
            return False
        return True

    def __str__(self):
        return "'auto' or a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps'"


def positive_int(low: int = 1) -> _Interval:
    """An int of at least ``low`` (the most common constraint)."""
    return Interval(Integral, low, None, closed="left")
