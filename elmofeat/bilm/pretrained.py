"""Pretrained word vectors for the biLM's word embedding."""

from __future__ import annotations

import os

import numpy as np


def load_word_vectors(path, words=None) -> "KeyedVectors":  # noqa: F821
    """Read a GloVe (no header) or word2vec (header) text file, optionally gzipped.

    Parameters
    ----------
    path : str or path-like
    words : collection of str, default=None
        Keep only these words (a lookup before any number is parsed: reading GloVe 6B
        for one corpus' vocabulary takes seconds instead of a minute).
    """
    from gensim import utils
    from gensim.models import KeyedVectors

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"pretrained_vectors file not found: {path}")
    with utils.open(path, "rb") as f:
        first = f.readline().split()
    has_header = len(first) == 2 and all(part.isdigit() for part in first)
    if words is None:
        return KeyedVectors.load_word2vec_format(path, binary=False, no_header=not has_header)
    wanted = set(words)
    keys, rows = [], []
    with utils.open(path, "rb") as f:
        if has_header:
            f.readline()
        for line in f:
            word, _, numbers = line.rstrip().partition(b" ")
            word = word.decode("utf-8", "replace")
            if word in wanted:
                keys.append(word)
                rows.append(np.array(numbers.split(), dtype=np.float32))
    if not rows:
        raise ValueError(f"{path}: none of the {len(wanted):,} words asked for is in the file")
    if len({len(row) for row in rows}) != 1:
        raise ValueError(f"{path}: rows of different widths; not a word-vector text file")
    vectors = KeyedVectors(vector_size=len(rows[0]), dtype=np.float32)
    vectors.add_vectors(keys, np.vstack(rows))
    return vectors


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
