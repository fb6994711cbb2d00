"""Declarative parameter validation in scikit-learn's style, elmofeat's own.

Estimators declare ``_parameter_constraints`` (parameter name -> list of accepted
constraints) and decorate ``fit`` with :func:`fit_context`, as scikit-learn's own do
(``preprocessing/_target_encoder.py``). scikit-learn's tools for that live in private
modules that change without deprecation, so elmofeat keeps this small validator instead;
it only reads scikit-learn's public ``skip_parameter_validation`` setting (scikit-learn
>= 1.3), so that ``sklearn.config_context(skip_parameter_validation=True)`` skips
elmofeat's checks as it skips scikit-learn's. Messages read like scikit-learn's.

A constraint is a type (an instance of it), ``None``, ``callable``, a
:class:`Constraint` or one of the names ``"boolean"``, ``"verbose"``,
``"random_state"``, ``"array-like"`` and ``"cv_object"``; ``"no_validation"`` instead of
a list skips a parameter. :class:`Interval` refuses booleans and infinite values (``True``
is an ``Integral`` to Python, and ``n_threads=True`` used to reach torch as 1),
:class:`Dtypes` accepts anything ``numpy.dtype`` turns into one of a few float types,
and :class:`TorchDevices` the device strings torch understands. Checks that span
parameters stay in code, in each estimator's ``_check_params_together``.
"""

from __future__ import annotations

import functools
import math
import operator
from numbers import Integral, Real

import numpy as np

__all__ = ["Constraint", "Dtypes", "Integral", "Interval", "InvalidParameterError", "Options",
           "Real", "RegisteredOptions", "StrOptions", "TorchDevices", "fit_context", "positive_int",
           "validate_parameter_constraints", "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A parameter has a value its constraints refuse (a ``ValueError`` and a
    ``TypeError``, as scikit-learn's own)."""


def _type_name(kind: type) -> str:
    if kind is Real:
        return "float"
    if kind is Integral:
        return "int"
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


class Constraint:
    """One accepted kind of value: :meth:`is_satisfied_by` and a description."""

    def is_satisfied_by(self, val) -> bool:
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError


class _InstanceOf(Constraint):
    def __init__(self, kind: type):
        self.kind = kind

    def is_satisfied_by(self, val):
        return isinstance(val, self.kind)

    def __str__(self):
        return f"an instance of {_type_name(self.kind)!r}"


class _NoneConstraint(Constraint):
    def is_satisfied_by(self, val):
        return val is None

    def __str__(self):
        return "None"


class _Callables(Constraint):
    def is_satisfied_by(self, val):
        return callable(val)

    def __str__(self):
        return "a callable"


class _ArrayLikes(Constraint):
    def is_satisfied_by(self, val):
        return (hasattr(val, "__len__") or hasattr(val, "shape") or hasattr(val, "__array__")) \
            and not np.isscalar(val) and not isinstance(val, (str, bytes))

    def __str__(self):
        return "an array-like"


class _HasMethods(Constraint):
    def __init__(self, methods):
        self.methods = list(methods)

    def is_satisfied_by(self, val):
        return all(callable(getattr(val, method, None)) for method in self.methods)

    def __str__(self):
        names = [repr(m) for m in self.methods]
        return f"an object implementing {' and '.join(names)}"


class _Iterables(Constraint):
    """Iterables that are not strings (a list of train/test splits)."""

    def is_satisfied_by(self, val):
        if isinstance(val, (str, bytes)):
            return False
        try:
            iter(val)
        except TypeError:
            return False
        return True

    def __str__(self):
        return "an iterable"


class Interval(Constraint):
    """Numbers of ``kind`` (``Integral`` or ``Real``) between ``left`` and ``right``
    (None: unbounded); ``closed`` is ``"left"``, ``"right"``, ``"both"`` or
    ``"neither"``. Booleans, NaN and infinities are refused.

    Examples
    --------
    >>> Interval(Integral, 1, None, closed="left").is_satisfied_by(True)
    False
    >>> Interval(Real, 0, None, closed="left").is_satisfied_by(float("inf"))
    False
    >>> str(Interval(Integral, 2, None, closed="left"))
    'an int in the range [2, inf)'
    """

    def __init__(self, kind, left, right, *, closed: str):
        if kind not in (Integral, Real):
            raise TypeError(f"Interval takes Integral or Real, got {kind!r}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither', got {closed!r}")
        self.type, self.left, self.right, self.closed = kind, left, right, closed

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, self.type):
            return False
        if not math.isfinite(val):
            return False
        left_ok = operator.ge if self.closed in ("left", "both") else operator.gt
        right_ok = operator.le if self.closed in ("right", "both") else operator.lt
        return ((self.left is None or left_ok(val, self.left))
                and (self.right is None or right_ok(val, self.right)))

    def __str__(self):
        kind = "an int" if self.type is Integral else "a float"
        def bound(value, infinite):
            if value is None:
                return infinite
            return f"{float(value)}" if self.type is Real else f"{value}"
        opening = "[" if self.closed in ("left", "both") and self.left is not None else "("
        closing = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return (f"{kind} in the range {opening}{bound(self.left, '-inf')}, "
                f"{bound(self.right, 'inf')}{closing}")


class Options(Constraint):
    """Values of ``kind`` among ``options``."""

    def __init__(self, kind: type, options):
        self.type, self.options = kind, set(options)

    def is_satisfied_by(self, val):
        return isinstance(val, self.type) and val in self.options

    def __str__(self):
        listed = ", ".join(repr(o) for o in sorted(self.options, key=repr))
        return f"a {_type_name(self.type)} among {{{listed}}}"


class StrOptions(Options):
    """Strings among ``options``."""

    def __init__(self, options):
        super().__init__(str, options)


class RegisteredOptions(StrOptions):
    """Strings among what ``names()`` returns when checked: the entries of a registry
    that may grow after the constraint is declared (``elmofeat.mixes``)."""

    def __init__(self, names):
        self._names = names
        self.type = str

    @property
    def options(self):
        return set(self._names())


class Dtypes(Options):
    """Anything ``numpy.dtype`` makes into one of ``names`` (``np.float32``, ``"float32"``...)."""

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


class TorchDevices(Constraint):
    """``"auto"`` or a device string torch understands (``"cpu"``, ``"cuda:1"``...)."""

    def is_satisfied_by(self, val):
        from .runtime.torch_helpers import check_device

        try:
            check_device(val)
        except (TypeError, ValueError):
            return False
        return True

    def __str__(self):
        return "'auto' or a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps'"


def positive_int(low: int = 1) -> Interval:
    """An int of at least ``low`` (the most common constraint)."""
    return Interval(Integral, low, None, closed="left")


_NAMED = {
    "boolean": lambda: [_InstanceOf(bool), _InstanceOf(np.bool_)],
    "verbose": lambda: [positive_int(0), _InstanceOf(bool), _InstanceOf(np.bool_)],
    "random_state": lambda: [Interval(Integral, 0, 2**32 - 1, closed="both"),
                             _InstanceOf(np.random.RandomState), _NoneConstraint()],
    "array-like": lambda: [_ArrayLikes()],
    "cv_object": lambda: [positive_int(2), _HasMethods(["split", "get_n_splits"]), _Iterables(),
                          _NoneConstraint()],
}


def _make_constraints(constraint) -> list[Constraint]:
    if isinstance(constraint, Constraint):
        return [constraint]
    if constraint is None:
        return [_NoneConstraint()]
    if constraint is callable:
        return [_Callables()]
    if isinstance(constraint, str) and constraint in _NAMED:
        return _NAMED[constraint]()
    if isinstance(constraint, type):
        return [_InstanceOf(constraint)]
    raise ValueError(f"unknown parameter constraint {constraint!r}")


def validate_parameter_constraints(parameter_constraints: dict, params: dict,
                                   caller_name: str) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter of ``params`` that
    none of its constraints accepts (parameters without constraints are not checked)."""
    for name, value in params.items():
        declared = parameter_constraints.get(name)
        if declared is None or (isinstance(declared, str) and declared == "no_validation"):
            continue
        constraints = [c for d in declared for c in _make_constraints(d)]
        if any(c.is_satisfied_by(value) for c in constraints):
            continue
        described = [str(c) for c in constraints]
        if len(described) > 1:
            described = [", ".join(described[:-1]) + " or " + described[-1]]
        raise InvalidParameterError(f"The {name!r} parameter of {caller_name} must be "
                                    f"{described[0]}. Got {value!r} instead.")


def validate_params(estimator) -> None:
    """Check ``estimator``'s parameters against its ``_parameter_constraints``."""
    validate_parameter_constraints(estimator._parameter_constraints,
                                   estimator.get_params(deep=False),
                                   caller_name=type(estimator).__name__)


def fit_context(*, prefer_skip_nested_validation: bool):
    """Decorate ``fit``: validate the estimator's parameters, then run it.

    Skipped where scikit-learn's ``skip_parameter_validation`` is set.
    ``prefer_skip_nested_validation=False`` for estimators that fit other estimators
    given as parameters (``ElmoVectorizer`` fits its ``BiLM``), so that theirs are
    checked too.
    """

    def decorate(fit_method):
        @functools.wraps(fit_method)
        def wrapper(estimator, *args, **kwargs):
            import sklearn

            skip = sklearn.get_config().get("skip_parameter_validation", False)
            if not skip:
                validate_params(estimator)
            with sklearn.config_context(
                    skip_parameter_validation=prefer_skip_nested_validation or skip):
                return fit_method(estimator, *args, **kwargs)

        return wrapper

    return decorate
