"""The registry of layer mixes: one :class:`MixSpec` per mix, the single place a mix is
declared.

Everything that offers a choice of mix is generated from it: the values
:class:`~elmofeat.ElmoVectorizer` accepts for ``layer_mix``, the suite's ELMo rows
(``elmofeat benchmark``), and the fitted types :func:`elmofeat.load` trusts. The
registry itself is plain Python (no torch, NumPy or scikit-learn import): the command
line lists the mixes in its ``--help`` without loading them.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Callable

from .._registry import Registry


@dataclass(frozen=True)
class MixSpec:
    """How a layer mix is fitted, and what the code around it needs to know.

    Parameters
    ----------
    name : str
        The value of ``ElmoVectorizer(layer_mix=...)``.
    label : str
        How a report names it ("ELMo, {label} mix").
    fit : callable or str
        ``fit(data, docs, settings) -> FittedMix``: learn the mix from the documents
        ``docs`` (indices) of a :class:`~elmofeat.mixes.base.MixData`, with the
        vectorizer's :class:`~elmofeat.mixes.base.MixSettings`. A ``"module:function"``
        string is imported on first use (the built-in mixes need torch only then).
    fitted_types : tuple of str
        Dotted names of the :class:`~elmofeat.mixes.base.FittedMix` classes ``fit``
        returns; :func:`elmofeat.load` trusts them.
    needs_labels : bool, default=True
        Whether ``fit`` learns from labels. A mix without labels is fitted without the
        token layers (``data.layers`` is None): it may use only the layer scales.
    learning_rate : float or None, default=None
        The AdamW learning rate of its training when ``mix_learning_rate=None``.
    commutes_with_mean_pooling : bool, default=False
        The mix is linear in the layers, so mixing then mean pooling equals pooling every
        layer then mixing: with mean pooling it is given ``data.pooled_layers`` and its
        features are computed from them (far fewer rows than tokens).
    parameters : tuple of str, default=()
        The ``ElmoVectorizer`` parameters only this mix (and others that list them) reads;
        setting one for another mix is refused. Of these, ``mix_weights`` is checked.
    description : str, default=""
        One line for ``--help`` and the docs.

    Notes
    -----
    A registered mix exists in the processes that register it: import the module that
    registers it before :func:`elmofeat.load` (which otherwise refuses its fitted type)
    and in the workers of a process-based parallel search, as AllenNLP's registered
    classes need their package imported.

    Examples
    --------
    A mix of the top layer alone, which needs no labels:

    >>> import numpy as np
    >>> from elmofeat import BiLM, ElmoVectorizer, mixes
    >>> from elmofeat.mixes.base import FittedMix
    >>> class TopLayer(FittedMix):
    ...     def __init__(self, dim):
    ...         self.n_features = dim
    ...     def apply(self, layers):  # (n_tokens, n_layers, dim) -> (n_tokens, dim)
    ...         return layers[:, -1, :].astype(np.float32)
    >>> spec = mixes.register(mixes.MixSpec(
    ...     "top", "top layer", fit=lambda data, docs, settings: TopLayer(data.dim),
    ...     fitted_types=(f"{__name__}.TopLayer",), needs_labels=False))
    >>> texts = ["good match , great goal", "stocks fell , markets down"] * 10
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> vec = ElmoVectorizer(bilm, layer_mix="top", bag_size=None, cache_dir=None)
    >>> vec.fit_transform(texts).shape
    (20, 16)
    >>> mixes.unregister("top")
    """

    name: str
    label: str
    fit: Callable | str
    fitted_types: tuple[str, ...]
    needs_labels: bool = True
    learning_rate: float | None = None
    commutes_with_mean_pooling: bool = False
    parameters: tuple[str, ...] = ()
    description: str = ""

    def fit_mix(self, data, docs, settings):
        """Call :attr:`fit` (imported on first use)."""
        fit = self.fit if callable(self.fit) else _imported(self.fit)
        return fit(data, docs, settings)


@functools.cache
def _imported(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


_REGISTRY: Registry[MixSpec] = Registry("mix", MixSpec)


def register(spec: MixSpec, *, replace: bool = False) -> MixSpec:
    """Add a mix to the registry (``replace=True`` to redefine a name); returns ``spec``.

    Examples
    --------
    >>> from elmofeat import mixes
    >>> mixes.get_mix("frozen").needs_labels
    False
    """
    return _REGISTRY.register(spec, replace=replace)


def unregister(name: str) -> None:
    """Remove a mix from the registry."""
    _REGISTRY.unregister(name)


def get_mix(name: str) -> MixSpec:
    """The spec of a registered mix; a ``ValueError`` naming the choices otherwise."""
    if name not in _REGISTRY:
        raise ValueError(f"layer_mix must be one of {mix_names()}, got {name!r}")
    return _REGISTRY[name]


def mix_names() -> tuple[str, ...]:
    """The registered mixes, in registration order."""
    return _REGISTRY.names()


def trusted_type_names() -> tuple[str, ...]:
    """Dotted names of every registered mix's fitted types (for :func:`elmofeat.load`)."""
    return tuple(dict.fromkeys(name for spec in _REGISTRY.values() for name in spec.fitted_types))
