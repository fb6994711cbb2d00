"""How a pickled ElmoVectorizer names the shipped pretrained model it uses, instead of
holding tens of MB of weights that elmofeat ships already, and how loading finds them
(:class:`PicklingMixin`)."""

from __future__ import annotations

from . import caches


def pretrained_reference(bilm) -> dict | None:
    """How a pickle names the shipped pretrained model ``bilm`` is: only when it is the
    process's shared copy of a registered model (read-only, so its weights are the
    checked ones). An adapted copy, a model moved to another device or any other biLM
    is held by the pickle; None then."""
    from ..bilm import hub, sharing

    name = sharing.registered_model(bilm)
    if name is None or name not in hub.REGISTRY:
        return None
    return {"pretrained_model": name, "sha256": hub.REGISTRY[name].sha256}


def shipped_model(reference: dict, device):
    """The pretrained model a pickle names (:func:`pretrained_reference`), if this
    elmofeat ships the very same weights; a ``ValueError`` says which it has otherwise."""
    from ..bilm import hub

    name, sha256 = reference["pretrained_model"], reference["sha256"]
    source = hub.REGISTRY.get(name)
    if source is None or source.sha256 != sha256:
        found = "does not have it" if source is None else f"has other weights ({source.sha256})"
        raise ValueError(
            f"this ElmoVectorizer was fitted with the pretrained model {name!r} (weights "
            f"SHA-256 {sha256}); this elmofeat {found}: load it with the elmofeat version "
            "it was saved with")
    device = "cpu" if isinstance(device, str) and device == "auto" else device
    return caches.shared_pretrained(name, device=device, prefer_local=False)


class PicklingMixin:
    """An ElmoVectorizer's pickled state: the shipped model it uses named, not held
    (:func:`pretrained_reference`), and the state of pickles saved by earlier versions
    completed with the behaviour they were fitted with."""

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_placed_bilm_copy", None)  # made again where the pickle is loaded
        reference = pretrained_reference(getattr(self, "bilm_", None))
        if reference is not None:  # tens of MB of weights that elmofeat ships already
            state["bilm_"] = reference
        return state

    def __setstate__(self, state):
        # saved before the bag, before fine-tuning: what they were fitted with
        state = {"bag_size": None, "bag_weight": 1.0, "fine_tune_epochs": 0, **state}
        if "mix_" in state:
            state.setdefault("bag_", None)
            # fitted before the features were scaled: the features it was fitted with
            state.setdefault("feature_scale_", 1.0)
        reference = state.get("bilm_")
        if isinstance(reference, dict) and "pretrained_model" in reference:
            state["bilm_"] = shipped_model(reference, state.get("device", "auto"))
        super().__setstate__(state)
