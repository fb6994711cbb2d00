"""elmofeat: contextual (ELMo-style) and classic word-vector text features for scikit-learn.

Every vectorizer takes raw strings and returns dense document features, and works in
:class:`~sklearn.pipeline.Pipeline`, :class:`~sklearn.model_selection.GridSearchCV`
and with :mod:`joblib`. The estimators are imported on first use (they bring torch). Importing elmofeat changes
nothing in the process (environment, warnings filters, malloc, torch's threads); the
process-level settings that help on a busy machine are opt-ins
(:func:`limit_openmp_spinning`, ``set_config(malloc_tuning=True)``).
"""

from .runtime.openmp import limit_openmp_spinning
from ._config import clear_caches, config_context, get_config, set_config
from ._lazy import lazy_attributes
from ._persistence import dump, load
from ._version import __version__

_EXPORTS = {
    "BiLM": ".bilm",
    "ElmoClassifier": ".elmo.classifier",
    "ElmoVectorizer": ".elmo.vectorizer",
    "SVDVectorizer": ".wordvectors.svd",
    "SkipGramVectorizer": ".wordvectors.skipgram",
    "StackingVectorizer": ".stacking",
    "WordVectorsVectorizer": ".wordvectors.pretrained",
    "make_hybrid": ".hybrid",
}
__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())

__all__ = ["BiLM", "ElmoClassifier", "ElmoVectorizer", "SVDVectorizer", "SkipGramVectorizer",
           "StackingVectorizer", "WordVectorsVectorizer",
           "__version__",
           "clear_caches", "config_context", "dump", "get_config", "limit_openmp_spinning", "load",
           "make_hybrid", "set_config"]
