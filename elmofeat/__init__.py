"""elmofeat: contextual (ELMo-style) and classic word-vector text features for scikit-learn.

Every vectorizer takes raw strings and returns dense document features, and works in
:class:`~sklearn.pipeline.Pipeline`, :class:`~sklearn.model_selection.GridSearchCV`
and with :mod:`joblib`. The estimators are imported on first use (they bring torch). Importing elmofeat
shortens how long torch's idle OpenMP threads spin (``GOMP_SPINCOUNT``) unless the user
has set it, so that a busy core does not stall the others (see ``elmofeat._openmp``).
"""

from ._openmp import limit_openmp_spinning

limit_openmp_spinning()  # before anything imports torch: libgomp reads it once

from ._config import clear_caches, config_context, get_config, set_config
from ._lazy import lazy_attributes
from ._persistence import dump, load
from ._version import __version__

_EXPORTS = {
    "BiLM": ".bilm",
    "ElmoVectorizer": ".elmo",
    "SVDVectorizer": ".svd",
    "SkipGramVectorizer": ".skipgram",
    "WordVectorsVectorizer": ".wordvectors",
    "make_hybrid": ".hybrid",
}
__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())

__all__ = ["BiLM", "ElmoVectorizer", "SVDVectorizer", "SkipGramVectorizer", "WordVectorsVectorizer",
           "__version__",
           "clear_caches", "config_context", "dump", "get_config", "load", "make_hybrid",
           "set_config"]
