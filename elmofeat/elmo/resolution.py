"""From an estimator's ``bilm`` parameter to the fitted biLM it reads: the one path of
``ElmoVectorizer`` and ``ElmoClassifier``.

A shipped model's name or a model folder is loaded once and shared (read-only); a
fitted ``BiLM`` is used as it is, or copied to the estimator's ``device``; either is
adapted to the texts when ``adapt_epochs`` asks; an unfitted ``BiLM`` (or None) is
pretrained on the texts. Adapted and pretrained models are cached
(:data:`~elmofeat.elmo.caches.BILMS`), in this process and in ``cache_dir``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from sklearn.base import clone

from . import caches as _bilm_cache
from .._paths import default_cache_dir
from ..bilm import BiLM
from ..runtime.torch_helpers import resolve_device


def is_fitted_bilm(bilm) -> bool:
    return bilm is not None and hasattr(bilm, "language_model_")


def cache_folder(estimator) -> Path | None:
    """Where pretrained and adapted biLMs are kept across processes: only an estimator
    seeded with an int writes there. A RandomState draws a new seed at every fit, so its
    biLMs would never be asked for again (each fit would add a file of tens of MB)."""
    if estimator.cache_dir is None or isinstance(estimator.random_state, np.random.RandomState):
        return None
    if isinstance(estimator.cache_dir, str) and estimator.cache_dir == "auto":
        return default_cache_dir()
    return Path(estimator.cache_dir)


def child_seed(estimator, random_state) -> int | None:
    """The seed of a biLM the estimator pretrains or adapts: None when it is unseeded,
    so that every fit on the same texts (the candidates of a search) shares one biLM in
    this process and none is written to ``cache_dir`` under a seed that no later fit
    would draw again."""
    if estimator.random_state is None:
        return None
    return int(random_state.randint(2**31 - 1))


def resolve_bilm(estimator, documents, random_state, threads):
    """The fitted biLM ``estimator`` reads for ``documents``.

    Parameters
    ----------
    estimator : ElmoVectorizer or ElmoClassifier
        Its ``bilm``, ``adapt_epochs``, ``device``, ``cache_dir``, ``random_state`` and
        ``verbose`` decide.
    documents : list of str
        The texts an adaptation or a pretraining learns from.
    random_state : numpy.random.RandomState
        Draws the seed of an adaptation or a pretraining (:func:`child_seed`).
    threads : ThreadPolicy
    """
    bilm, device = estimator.bilm, estimator.device
    auto = isinstance(device, str) and device == "auto"
    if isinstance(bilm, (str, os.PathLike)):
        bilm = _bilm_cache.shared_pretrained(bilm, device="cpu" if auto else device)
    if is_fitted_bilm(bilm):
        if not auto and next(bilm.language_model_.parameters()).device != resolve_device(device):
            bilm = bilm.copy_to(device)
        if not estimator.adapt_epochs:
            return bilm
        params = {"max_epochs": estimator.adapt_epochs,
                  "random_state": child_seed(estimator, random_state),
                  "verbose": estimator.verbose or bilm.verbose}
        return _bilm_cache.BILMS.adapted(bilm, documents, params, cache_folder(estimator),
                                         threads)
    if estimator.adapt_epochs:
        raise ValueError("adapt_epochs continues the pretraining of a pretrained biLM: "
                         "give bilm a pretrained model's name or path, or a fitted BiLM")
    bilm = bilm if bilm is not None else BiLM(random_state=child_seed(estimator, random_state))
    bilm = clone(bilm).set_params(device=device, verbose=estimator.verbose or bilm.verbose)
    return _bilm_cache.BILMS.fitted(bilm, documents, cache_folder(estimator), threads)
