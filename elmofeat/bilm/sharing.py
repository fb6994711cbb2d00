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

What a mark guarantees, by route (every route the fifth probe took):

* **Parameters and attributes**: ``set_params``, ``fit`` and plain attribute writes
  (``bilm.max_len = 4``) are refused (:func:`check_writable`, ``BiLM.__setattr__``);
  ``layer_scales_`` is a read-only array.
* **Weights in place**: the modules' tensors become inference tensors
  (:func:`freeze_tensors`), which torch refuses to change outside inference mode:
  ``load_state_dict``, in-place edits under ``torch.no_grad()``, an optimizer's step
  and autograd all fail. Converting them costs no memory beyond one tensor's copy at a
  time, once per process.
* **Dtype, device, rebinding**: ``.half()``, ``.to(...)`` or replacing a module or a
  tensor cannot be refused by torch; :func:`check_intact` finds them (it compares each
  tensor's identity, storage, dtype, device and shape with those recorded when the
  model was marked, in microseconds) before every use, and refuses to run or pickle a
  model changed so.
* **Training mode**: ``.train()`` changes nothing: inference always runs the modules
  in eval mode (dropout off).

What it cannot see: writes through ``tensor.data`` (torch's legacy escape hatch, which
bypasses both the inference-tensor check and version counting) and edits made inside
``torch.inference_mode()``. Those are documented, not refused.
"""

from __future__ import annotations

import weakref

import numpy as np

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
    return (id(bilm.language_model_), tensor_layout(bilm.language_model_), params,
            id(getattr(bilm, "layer_scales_", None)), id(bilm.vocabulary_))


def is_shared(bilm) -> bool:
    try:
        return bilm in _SHARED_ESTIMATORS
    except TypeError:  # not weakly referable (None): never shared
        return False


def registered_model(bilm) -> str | None:
    """The registered model's name if ``bilm`` is the process's shared copy of it
    (checked intact: see :func:`check_intact`)."""
    if not is_shared(bilm):
        return None
    check_intact(bilm)
    return _SHARED_ESTIMATORS[bilm][0][0]


def is_intact(bilm) -> bool:
    """Whether a shared biLM is as it was marked (True for one that is not shared)."""
    return not is_shared(bilm) or _record(bilm) == _SHARED_ESTIMATORS[bilm][1]


def check_intact(bilm) -> None:
    """Refuse to use a shared biLM whose tensors, modules or parameters were changed
    since it was marked (``.half()``, ``.to()``, a rebound tensor or module, a write to
    its ``__dict__``): its features would no longer be the model's."""
    if not is_shared(bilm):
        return
    if is_intact(bilm):
        return
    name, what = _SHARED_ESTIMATORS[bilm][0]
    private = (f"BiLM.from_pretrained({name!r})" if name is not None
               else "copy.deepcopy(vectorizer.bilm_) before changing it")
    raise ValueError(
        f"this BiLM is {what}, and it was changed in place since it was loaded (its "
        "tensors' dtype, device or storage, a module, or a parameter): every ElmoVectorizer "
        "that reads it would give other features than the model's, so it is no longer "
        f"used. Change a private copy instead ({private}); vectorizers fitted from now on "
        "read the model afresh")


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
