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

What a mark guarantees, by route (every route the fifth and sixth probes took):

* **Parameters and attributes**: ``set_params``, ``fit`` and plain attribute writes
  (``bilm.max_len = 4``) are refused (:func:`check_writable`, ``BiLM.__setattr__``);
  ``layer_scales_`` is a read-only array, and its values are checked before each use.
* **Weights in place, by any route**: the values are checked before they are used
  (:meth:`BiLM.weights_key` against the fingerprint taken when the model was marked,
  :mod:`~elmofeat.bilm.integrity`): every call checks the encoder's tensors and the
  rows of the word table its documents read, before features are computed or cached
  layers served; a pickle that names the model and an adaptation's key check every
  value. A change by any route (``load_state_dict``, an optimizer's step, edits under
  ``torch.no_grad()`` or inside ``torch.inference_mode()``, through ``.data``, a NumPy
  view or the storage) is refused there with a clear error (:func:`check_values`).
  The modules' tensors are also inference tensors (:func:`freeze_tensors`), so that
  torch refuses most in-place edits outside inference mode, but torch refuses them
  after applying them: the check of the values is what holds.
* **Dtype, device, rebinding**: ``.half()``, ``.to(...)`` or replacing a module or a
  tensor: :func:`check_intact` compares each tensor's identity, storage, dtype, device
  and shape with those recorded when the model was marked, in microseconds, before
  every use, and refuses to run or pickle a model changed so.
* **Hooks**: a forward hook on one of its modules (or a global one) would change what
  every vectorizer computes; :func:`check_intact` refuses to run while one is set.
* **Training mode**: ``.train()`` changes nothing: inference always runs the modules
  in eval mode (dropout off).
"""

from __future__ import annotations

import weakref

import numpy as np

from ..runtime.torch_helpers import forward_hooks

# estimator -> ((registered model's name or None, what it is, in words), its record)
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
    if bilm in _SHARED_ESTIMATORS:  # marked before: a name given later is kept
        if registered_name is None:
            return bilm
        _SHARED_ESTIMATORS[bilm] = (mark, _SHARED_ESTIMATORS[bilm][1])
        _SHARED_MODULES[bilm.language_model_] = mark
        return bilm
    freeze_tensors(bilm.language_model_)
    scales = getattr(bilm, "layer_scales_", None)
    if scales is not None:
        scales = np.array(scales, dtype=np.float32)
        scales.setflags(write=False)
        bilm.layer_scales_ = scales
    bilm.weights_key()  # the fingerprint every later use is checked against
    _SHARED_ESTIMATORS[bilm] = (mark, _record(bilm))
    _SHARED_MODULES[bilm.language_model_] = mark
    return bilm


def freeze_tensors(module) -> None:
    """Make every parameter and buffer of ``module`` an inference tensor (a copy made
    under ``torch.inference_mode()``): torch then refuses to change it in place outside
    inference mode. Its values, and the module's behaviour in inference, are unchanged."""
    import torch
    from torch import nn

    with torch.inference_mode():
        for owner in module.modules():
            for name, tensor in list(owner.named_parameters(recurse=False)):
                if not tensor.is_inference():
                    setattr(owner, name, nn.Parameter(tensor.detach().clone(),
                                                      requires_grad=False))
            for name, tensor in list(owner.named_buffers(recurse=False)):
                if tensor is not None and not tensor.is_inference():
                    setattr(owner, name, tensor.detach().clone())


def tensor_layout(module) -> tuple:
    """Identity, storage, dtype, device and shape of every tensor of ``module``: what
    ``.half()``, ``.to()`` or rebinding a tensor or a submodule changes."""
    return tuple((name, id(t), t.data_ptr(), t.dtype, t.device, tuple(t.shape))
                 for name, t in module.state_dict(keep_vars=True).items())


def _record(bilm) -> tuple:
    params = repr(sorted(bilm.get_params(deep=False).items()))
    scales = getattr(bilm, "layer_scales_", None)
    return (id(bilm.language_model_), tensor_layout(bilm.language_model_), params,
            id(scales), None if scales is None else np.asarray(scales).tobytes(),
            id(bilm.vocabulary_))


def is_shared(bilm) -> bool:
    try:
        return bilm in _SHARED_ESTIMATORS
    except TypeError:  # not weakly referable (None): never shared
        return False


def registered_model(bilm) -> str | None:
    """The registered model's name if ``bilm`` is the process's shared copy of it
    (checked intact, every value included: see :func:`check_intact`,
    :func:`check_values`)."""
    if not is_shared(bilm):
        return None
    check_intact(bilm)
    bilm.weights_key()  # every value, against the fingerprint taken when it was marked
    return _SHARED_ESTIMATORS[bilm][0][0]


def is_intact(bilm) -> bool:
    """Whether a shared biLM's tensors, modules, parameters and layer scales are as they
    were marked, with no forward hook set (True for one that is not shared). The
    weights' values are checked by :meth:`BiLM.weights_key` (:func:`check_values`)."""
    return not is_shared(bilm) or (_record(bilm) == _SHARED_ESTIMATORS[bilm][1]
                                   and not forward_hooks(bilm.language_model_))


def is_unchanged(bilm) -> bool:
    """:func:`is_intact`, and every value of its weights as when it was marked (a
    tenth of a second for en-base: once per fit that names the model, not per call)."""
    if not is_intact(bilm):
        return False
    try:
        bilm.weights_key()
    except ValueError:
        return False
    return True


def check_intact(bilm) -> None:
    """Refuse to use a shared biLM whose tensors, modules or parameters were changed
    since it was marked (``.half()``, ``.to()``, a rebound tensor or module, a write to
    its ``__dict__``): its features would no longer be the model's."""
    if not is_shared(bilm):
        return
    name, what = _SHARED_ESTIMATORS[bilm][0]
    hooked = forward_hooks(bilm.language_model_)
    if hooked and _record(bilm) == _SHARED_ESTIMATORS[bilm][1]:
        raise ValueError(
            f"this BiLM is {what}, and a forward hook is set on it ({', '.join(hooked[:3])}): "
            "it would change what every ElmoVectorizer that reads the model computes, and "
            "the layers they cache. Remove the hook, or set it on a private copy: "
            + _private_copy(name))
    if is_intact(bilm):
        return
    raise ValueError(
        f"this BiLM is {what}, and it was changed in place since it was loaded (its "
        "tensors' dtype, device or storage, a module, or a parameter): every ElmoVectorizer "
        "that reads it would give other features than the model's, so it is no longer "
        f"used. Change a private copy instead ({_private_copy(name)}); vectorizers fitted "
        "from now on read the model afresh")


def _private_copy(name) -> str:
    return (f"BiLM.from_pretrained({name!r})" if name is not None
            else "copy.deepcopy(vectorizer.bilm_) before changing it")


def check_values(bilm, changed) -> None:
    """Refuse a shared biLM whose weights' values differ from those it was marked with
    (``changed``: the tensors' names), whatever the route of the change (an edit through
    ``.data``, a NumPy view, the storage, inside ``torch.inference_mode()``, or one that
    torch refused after applying it). A biLM that is not shared may change: its
    digest is then computed again."""
    if not is_shared(bilm):
        return
    name, what = _SHARED_ESTIMATORS[bilm][0]
    raise ValueError(
        f"this BiLM is {what}, and the values of its weights were changed in place since "
        f"it was loaded ({', '.join(sorted(changed)[:3])}"
        f"{', ...' if len(changed) > 3 else ''}): every ElmoVectorizer that reads it would "
        "give other features than the model's, and cached layers and pickles would no "
        f"longer match, so it is no longer used. Change a private copy instead "
        f"({_private_copy(name)}); vectorizers fitted from now on read the model afresh")


def check_writable(bilm, action: str, *, training_in_place: bool = False) -> None:
    """Refuse ``action`` (``"set_params"``, ``"fit"``, ``"setting max_len"``) on a
    shared biLM.

    ``training_in_place``: the action trains the current modules further
    (``warm_start``), which a copy sharing them must not do either.
    """
    lm = getattr(bilm, "language_model_", None)
    if is_shared(bilm):
        name, what = _SHARED_ESTIMATORS[bilm][0]
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
