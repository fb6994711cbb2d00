"""elmofeat's own parameter validator (no private scikit-learn API behind it)."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import KFold

from elmofeat import BiLM
from elmofeat._param_validation import (Integral, Interval, InvalidParameterError, Real,
                                        StrOptions, validate_parameter_constraints)

CONSTRAINTS = {
    "size": [Interval(Integral, 1, None, closed="left")],
    "rate": [Interval(Real, 0, 1, closed="neither"), None],
    "kind": [StrOptions({"b", "a"})],
    "flag": ["boolean"],
    "seed": ["random_state"],
    "folds": ["cv_object"],
    "weights": ["array-like", None],
    "hook": [callable, None],
    "anything": "no_validation",
}


@pytest.mark.parametrize("name, value", [
    ("size", 3), ("size", np.int64(3)), ("rate", 0.5), ("rate", None), ("kind", "a"),
    ("flag", np.bool_(True)), ("seed", 0), ("seed", np.random.RandomState(0)), ("seed", None),
    ("folds", 5), ("folds", KFold(3)), ("folds", [([0], [1])]), ("folds", None),
    ("weights", [1.0, 2.0]), ("weights", np.ones(3)), ("hook", len), ("anything", object())])
def test_accepts(name, value):
    validate_parameter_constraints(CONSTRAINTS, {name: value}, caller_name="Thing")


@pytest.mark.parametrize("name, value, message", [
    ("size", 0, r"The 'size' parameter of Thing must be an int in the range \[1, inf\). Got 0 instead."),
    ("size", True, "must be an int in the range"),
    ("size", 1.5, "Got 1.5 instead"),
    ("rate", 1.0, r"must be a float in the range \(0.0, 1.0\) or None"),
    ("rate", float("nan"), "Got nan instead"),
    ("kind", "c", r"must be a str among \{'a', 'b'\}"),
    ("flag", 1, "must be an instance of 'bool' or an instance of 'numpy.bool"),
    ("seed", -1, r"an int in the range \[0, 4294967295\], an instance of 'numpy.random"),
    ("folds", 1, r"an int in the range \[2, inf\), an object implementing 'split' and "
                 r"'get_n_splits', an iterable or None"),
    ("folds", "x", "Got 'x' instead"),
    ("weights", 3, "must be an array-like or None"),
    ("hook", 3, "must be a callable or None")])
def test_refuses_with_scikit_learns_wording(name, value, message):
    with pytest.raises(InvalidParameterError, match=message) as error:
        validate_parameter_constraints(CONSTRAINTS, {name: value}, caller_name="Thing")
    assert isinstance(error.value, ValueError) and isinstance(error.value, TypeError)


def test_fit_honours_scikit_learns_skip_parameter_validation():
    with pytest.raises(InvalidParameterError, match="'max_len' parameter of BiLM"):
        BiLM(max_len=0).fit(["a b c"])
    with sklearn.config_context(skip_parameter_validation=True):
        with pytest.raises(Exception) as skipped:  # reaches the code, which fails its own way
            BiLM(max_len=0).fit(["a b c"])
    assert not isinstance(skipped.value, InvalidParameterError)
