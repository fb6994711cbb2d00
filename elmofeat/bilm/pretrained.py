"""Pretrained word vectors for the biLM's word embedding."""

from __future__ import annotations

import os

import numpy as np


def load_word_vectors(path) -> "KeyedVectors":  # noqa: F821
    """Read a GloVe (no header) or word2vec (header) text file, optionally gzipped."""
    from gensim.models import KeyedVectors

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"pretrained_vectors file not found: {path}")
    from gensim import utils

    with utils.open(path, "rb") as f:
        first = f.readline().split()
    has_header = len(first) == 2 and all(part.isdigit() for part in first)
    return KeyedVectors.load_word2vec_format(path, binary=False, no_header=not has_header)


def resolve_pretrained(pretrained, texts):
    """KeyedVectors from a path, KeyedVectors or (fitted or unfitted) word-vector vectorizer."""
    from gensim.models import KeyedVectors
    from sklearn.base import clone

    if isinstance(pretrained, (str, os.PathLike)):
        return load_word_vectors(pretrained)
    if isinstance(pretrained, KeyedVectors):
        return pretrained
    if hasattr(pretrained, "keyed_vectors_"):
        return pretrained.keyed_vectors_
    if hasattr(pretrained, "fit") and hasattr(pretrained, "get_params"):
        # An unfitted vectorizer (for instance after clone): learn it on the same texts.
        return clone(pretrained).fit(texts).keyed_vectors_
    raise TypeError(
        "pretrained_vectors must be a path, a gensim KeyedVectors or an SVDVectorizer / "
        f"SkipGramVectorizer, got {type(pretrained).__name__}"
    )


def pretrained_matrix(keyed_vectors, words, n_special: int) -> tuple[np.ndarray, dict]:
    """Rows of ``keyed_vectors`` for ``words``; NaN rows for words it lacks.

    The first ``n_special`` words (``<pad>``, ``<unk>``...) are never looked up.
    """
    matrix = np.full((len(words), keyed_vectors.vector_size), np.nan, dtype=np.float32)
    rows = np.array(
        [keyed_vectors.key_to_index.get(word, -1) for word in words[n_special:]], dtype=np.int64
    )
    known = rows >= 0
    matrix[n_special:][known] = keyed_vectors.vectors[rows[known]]
    return matrix, {"found": int(known.sum()), "missing": int((~known).sum())}
