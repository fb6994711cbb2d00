"""elmofeat: contextual (ELMo-style) and classic word-vector text features for scikit-learn.

Every vectorizer takes raw strings and returns dense document features, and works in
:class:`~sklearn.pipeline.Pipeline`, :class:`~sklearn.model_selection.GridSearchCV`
and with :mod:`joblib`.
"""

from ._config import config_context, get_config, set_config
from ._persistence import dump, load
from ._version import __version__
from .bilm import BiLM
from .elmo import ElmoVectorizer
from .hybrid import make_hybrid
from .skipgram import SkipGramVectorizer
from .svd import SVDVectorizer

__all__ = ["BiLM", "ElmoVectorizer", "SVDVectorizer", "SkipGramVectorizer", "__version__",
           "config_context", "dump", "get_config", "load", "make_hybrid", "set_config"]
