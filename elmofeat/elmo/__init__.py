"""The ElmoVectorizer: a pretrained biLM's layers, mixed (:mod:`elmofeat.mixes`) and
pooled into document features.

* :mod:`~elmofeat.elmo.vectorizer`: :class:`~elmofeat.ElmoVectorizer` (parameters, fit,
  cross-fitted ``fit_transform``, transform);
* :mod:`~elmofeat.elmo.transform`: the memory-bounded, optionally parallel transform;
* :mod:`~elmofeat.elmo.caches`: pretrained biLMs and layer representations shared by
  clones, searches and worker processes (:func:`elmofeat.clear_caches` empties them);
* :mod:`~elmofeat.elmo.labels`: labels checked before any pretraining.

The biLM itself is :mod:`elmofeat.bilm`; the vectorizer uses its public methods only.
"""

from .._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(__name__, {"ElmoVectorizer": ".vectorizer"}, globals())

__all__ = ["ElmoVectorizer"]
