"""Fitted biLMs shared by the whole process, read-only to their users.

A named pretrained model (``ElmoVectorizer("en-base")``) is loaded once per process,
and a biLM pretrained or adapted on some texts is kept for every vectorizer fitted on
the same texts (the candidates of a search). Each such object is the ``bilm_`` of many
vectorizers at once, so training it in place, or changing its parameters, would change
the features of all of them, and a pickle that names the shipped model would no longer
hold what the vectorizer uses. :func:`share` marks an object as shared;
:meth:`BiLM.fit` and :meth:`BiLM.set_params` then refuse to change it
(:func:`check_writable`), with a message that says how to get a private copy.

The marks are weak: they never keep a model alive, and a copy (``copy.deepcopy``,
``BiLM.shared_copy``, a pickle) is not marked. A copy that still shares the marked
modules (``shared_copy``) may change its parameters (copy on write) and may be fitted
afresh, but not trained further in place (``warm_start``).
"""

from __future__ import annotations

import weakref

# estimator -> (registered model's name or None, what it is, in words)
_SHARED_ESTIMATORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# language model module -> the same, for copies that share the module
_SHARED_MODULES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

CACHED = ("a biLM elmofeat keeps for every ElmoVectorizer fitted on the same texts (its "
          "cache)")


def share(bilm, registered_name: str | None = None, source: str | None = None):
    """Mark the fitted ``bilm`` (and its modules) as shared by the process; returns it.

    ``registered_name``: the registered pretrained model whose untouched weights it
    holds, so that a pickle may name the model instead of holding its weights.
    ``source``: where it was loaded from (a path), for the messages; neither: a biLM
    of elmofeat's cache.
    """
    if registered_name is None and source is None:
        mark = (None, CACHED)
    else:
        what = (f"the pretrained model {registered_name!r}" if registered_name is not None
                else f"the pretrained model at {source}")
        mark = (registered_name, f"{what}, loaded once for the whole process and read by "
                                 "every ElmoVectorizer that names it")
    _SHARED_ESTIMATORS[bilm] = mark
    _SHARED_MODULES[bilm.language_model_] = mark
    return bilm


def is_shared(bilm) -> bool:
    try:
        return bilm in _SHARED_ESTIMATORS
    except TypeError:  # not weakly referable (None): never shared
        return False


def registered_model(bilm) -> str | None:
    """The registered model's name if ``bilm`` is the process's shared copy of it."""
    return _SHARED_ESTIMATORS[bilm][0] if is_shared(bilm) else None


def check_writable(bilm, action: str, *, training_in_place: bool = False) -> None:
    """Refuse ``action`` (``"set_params"``, ``"fit"``) on a shared biLM.

    ``training_in_place``: the action trains the current modules further
    (``warm_start``), which a copy sharing them must not do either.
    """
    lm = getattr(bilm, "language_model_", None)
    if is_shared(bilm):
        name, what = _SHARED_ESTIMATORS[bilm]
    elif training_in_place and lm is not None and lm in _SHARED_MODULES:
        name, what = _SHARED_MODULES[lm]
    else:
        return
    adapt = (f"ElmoVectorizer(bilm={name!r}, adapt_epochs=k) adapts a copy, or "
             if name is not None else "")
    raise ValueError(
        f"{action} would change this BiLM in place, but it is {what}: their features "
        f"would change too. {adapt}work on a private copy: "
        "bilm = copy.deepcopy(vectorizer.bilm_)"
        + (f" or bilm = BiLM.from_pretrained({name!r})" if name is not None else ""))
