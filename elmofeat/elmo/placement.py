"""Where a fitted vectorizer's biLM runs when it transforms: the device its ``device``
parameter names now, not the one it was fitted on.

A vectorizer fitted on a GPU and loaded where there is none transforms on the CPU after
``set_params(device="cpu")``, or with ``device="auto"``. The fitted ``bilm_`` is left as
it is (it may be shared, and a pickle may name it): a copy on the wanted device is made
once and kept by the vectorizer.
"""

from __future__ import annotations

import torch

from ..runtime.torch_helpers import resolve_device


def _available(device) -> bool:
    try:
        resolve_device(str(device))
    except ValueError:
        return False
    return True


def same_device(a, b) -> bool:
    """``cuda`` and ``cuda:0`` alike: an index counts only where both have one."""
    a, b = torch.device(a), torch.device(b)
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


def _runs_on(bilm, target) -> bool:
    """Whether the biLM's own ``device`` names ``target`` (and is available here)."""
    try:
        return same_device(resolve_device(bilm.device), target)
    except ValueError:
        return False


def target_device(bilm, device) -> torch.device:
    """The device to run ``bilm`` on for a vectorizer whose ``device`` is ``device``:
    ``"auto"`` keeps the modules where they are if that device is here, else the CPU;
    a named device must be here (its error says so otherwise)."""
    modules_on = next(bilm.language_model_.parameters()).device
    if isinstance(device, str) and device == "auto":
        return modules_on if _available(modules_on) else torch.device("cpu")
    return resolve_device(device)


def placed(bilm, device, previous: tuple | None) -> tuple:
    """``(the biLM to run, what to keep for the next call)``: ``bilm`` itself where it
    runs on the wanted device already, else ``previous``'s copy when it was made of
    ``bilm`` for that device, else a new copy (the same modules told where they are, or
    modules moved there)."""
    target = target_device(bilm, device)
    modules_on = next(bilm.language_model_.parameters()).device
    if same_device(modules_on, target) and _runs_on(bilm, target):
        return bilm, previous
    if previous is not None and previous[0] is bilm and previous[1] == target:
        return previous[2], previous
    if same_device(modules_on, target):
        copy_ = bilm.shared_copy()
        copy_.device = str(target)
    else:
        copy_ = bilm.copy_to(str(target))
    return copy_, (bilm, target, copy_)
