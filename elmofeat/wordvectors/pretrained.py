"""WordVectorsVectorizer: document features from existing word vectors (GloVe, word2vec,
fastText), pooled."""

from __future__ import annotations

import functools
import os

import numpy as np

from .base import BaseWordVectorizer


class WordVectorsVectorizer(BaseWordVectorizer):
    """Pooled pretrained word vectors: GloVe, word2vec or fastText files, or gensim vectors.

    ``fit`` learns nothing from the texts: it reads (or takes) the vectors and keeps them
    as ``keyed_vectors_``. ``transform`` pools the vectors of each document's words;
    words without a vector are left out. The cheap baseline for "my texts plus someone
    else's word vectors", and the features that the token layer of a
    ``BiLM(pretrained_vectors=...)`` starts from.

    Parameters
    ----------
    vectors : str, path or gensim KeyedVectors
        A text file in GloVe format (no header) or word2vec/fastText ``.vec`` format
        (header line), optionally gzipped, or loaded ``KeyedVectors``.
    pooling : {"mean", "max", "meanmax"}, default="mean"
    norm : {None, "l2"}, default=None
        ``"l2"``: each document's features scaled to unit length (zero rows stay zero).
    dtype : {np.float32, np.float64}, default=np.float32
    lowercase : bool, default=True
        GloVe's words are lower-case.
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
        As in ``TfidfVectorizer``.
    tokenizer : callable, default=None

    Attributes
    ----------
    keyed_vectors_ : gensim KeyedVectors
        The vectors (the whole file: a pickle or ``elmofeat.dump`` of this vectorizer
        holds them all). Read from a file, they are shared by every vectorizer of the
        process that reads it, and their array is read-only (copy it to change it).

    Examples
    --------
    >>> import numpy as np
    >>> from gensim.models import KeyedVectors
    >>> from elmofeat import WordVectorsVectorizer
    >>> kv = KeyedVectors(vector_size=2)
    >>> kv.add_vectors(["good", "bad"], np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> WordVectorsVectorizer(kv).fit_transform(["good good bad", "unknown words"]).round(3)
    array([[0.667, 0.333],
           [0.   , 0.   ]], dtype=float32)
    """

    _feature_prefix = "wordvectors"
    _parameter_constraints: dict = {
        **BaseWordVectorizer._text_parameter_constraints,
        **BaseWordVectorizer._output_parameter_constraints,
        "vectors": "no_validation",  # a path or KeyedVectors, checked when loaded
    }

    def __init__(self, vectors=None, *, pooling="mean", norm=None, dtype=np.float32,
                 lowercase=True, token_pattern=r"(?u)\b\w\w+\b", tokenizer=None):
        self.vectors = vectors
        self.pooling = pooling
        self.norm = norm
        self.dtype = dtype
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer

    def __sklearn_clone__(self):
        # Loaded vectors are read-only data: clones (one per GridSearchCV candidate and
        # fold) share them instead of deep-copying a vocabulary of 400,000 vectors each.
        return self._clone_sharing(vectors=self.vectors)

    def __getstate__(self):
        state = super().__getstate__()
        kv = state.get("keyed_vectors_")
        if kv is not None and isinstance(kv.key_to_index, FrozenDict):
            # a pickle holds the vectors (see keyed_vectors_), in plain types
            import copy

            plain = copy.copy(kv)
            plain.key_to_index, plain.index_to_key = dict(kv.key_to_index), list(kv.index_to_key)
            state["keyed_vectors_"] = plain
        return state

    def _fit_keyed_vectors(self, token_lists):
        from gensim.models import KeyedVectors

        if isinstance(self.vectors, KeyedVectors):
            from .io import check_finite_vectors

            return check_finite_vectors(self.vectors, "vectors")
        if isinstance(self.vectors, (str, os.PathLike)):
            if not os.path.isfile(self.vectors):
                raise FileNotFoundError(f"word vectors file not found: {self.vectors}")
            # Every clone of a search fits on the same file: read it once per version.
            stat = os.stat(self.vectors)
            shared = _read_vectors(os.path.realpath(self.vectors), stat.st_mtime_ns, stat.st_size)
            return _view(shared)
        raise TypeError("vectors must be a path to a word-vector text file or a gensim "
                        f"KeyedVectors, got {type(self.vectors).__name__}")


@functools.lru_cache(maxsize=2)
def _read_vectors(path: str, mtime_ns: int, size: int):
    """The vectors of ``path`` (keyed by its modification time and size too, so that a
    changed file is read again), shared by every vectorizer of the process that reads
    the file: read-only, so that changing one vectorizer's ``keyed_vectors_`` in place
    fails instead of changing the features of the others."""
    from .io import load_word_vectors

    keyed_vectors = load_word_vectors(path)
    keyed_vectors.vectors.setflags(write=False)
    keyed_vectors.key_to_index = FrozenDict(keyed_vectors.key_to_index)
    keyed_vectors.index_to_key = FrozenList(keyed_vectors.index_to_key)
    for values in keyed_vectors.expandos.values():
        values.setflags(write=False)
    return keyed_vectors


def _view(shared):
    """A vectorizer's own ``KeyedVectors`` over the process's shared, read-only arrays
    and word index (no copy of them): rebinding its attributes changes this vectorizer
    alone, and changing the shared contents (a write into the array, ``add_vector``)
    is refused."""
    import copy

    view = copy.copy(shared)
    view.expandos = dict(shared.expandos)
    return view


_SHARED = ("these word vectors are read from a file once and shared, read-only, by every "
           "WordVectorsVectorizer of the process that reads it (their features would "
           "change too): change a copy, kv = copy.deepcopy(vectorizer.keyed_vectors_)")


def _refuse(self, *args, **kwargs):
    raise TypeError(_SHARED)


class FrozenDict(dict):
    """The shared word index (word -> row): read-only; a copy or pickle is a dict."""

    __setitem__ = __delitem__ = __ior__ = _refuse
    update = pop = popitem = clear = setdefault = _refuse

    def __reduce_ex__(self, protocol):
        return dict, (dict(self),)

    def __deepcopy__(self, memo):
        return dict(self)


class FrozenList(list):
    """The shared words in row order: read-only; a copy or pickle is a list."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce_ex__(self, protocol):
        return list, (list(self),)

    def __deepcopy__(self, memo):
        return list(self)
