"""Pretrained word vectors for the biLM's word embedding."""

from __future__ import annotations

import logging
import os

import numpy as np

logger = logging.getLogger("elmofeat")


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


def resolve_pretrained(pretrained, texts, words=None):
    """KeyedVectors from a path, KeyedVectors or (fitted or unfitted) word-vector vectorizer.

    ``words``: the vocabulary, when known; a file is then read for those words only
    (a 400,000-word GloVe file costs seconds and megabytes instead of minutes and
    gigabytes).
    """
    from gensim.models import KeyedVectors
    from sklearn.base import clone

    if isinstance(pretrained, (str, os.PathLike)):
        return load_word_vectors(pretrained, words)
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


def corpus_vectors(token_lists, vocabulary, n_special: int, dim: int,
                   random_state: np.random.RandomState) -> tuple[np.ndarray, dict]:
    """Initial word vectors learned from the training texts themselves: PPMI + SVD.

    A language model of a few hundred thousand tokens learns little about what words
    mean (its own embedding, mean-pooled, classifies AG News barely better than
    random vectors do), while the texts' co-occurrence counts already carry it. The
    vectors of :class:`~elmofeat.SVDVectorizer` (window 5, PPMI, ``U * S ** 0.5``) of
    the vocabulary's words, scaled to a mean norm of 1 (the scale of a random
    initialisation), are where the word embedding starts.

    Returns
    -------
    matrix : ndarray of shape (len(vocabulary), dim), float32
        NaN rows for the ``n_special`` special tokens and for words that co-occur with
        no other word (the embedding draws those at random).
    coverage : dict
        ``{"found": ..., "missing": ...}`` words with and without a vector.
    """
    from .._text import RaggedIds
    from ..svd import svd_word_vectors

    n_words = len(vocabulary) - n_special
    matrix = np.full((len(vocabulary), dim), np.nan, dtype=np.float32)
    n_components = min(dim, n_words - 1)
    if n_components < 1:
        return matrix, {"found": 0, "missing": n_words}
    corpus = vocabulary.encode(token_lists)
    ids = np.where(corpus.ids < n_special, -1, corpus.ids - n_special)
    try:
        vectors, _ = svd_word_vectors(RaggedIds(ids, corpus.offsets), n_words, n_components,
                                      random_state=random_state)
    except ValueError:  # no two words co-occur: nothing to learn from the counts
        return matrix, {"found": 0, "missing": n_words}
    norms = np.linalg.norm(vectors, axis=1)
    known = norms > 0
    vectors = vectors / norms[known].mean()
    if n_components < dim:  # a vocabulary smaller than the embedding: small noise fills it
        noise = random_state.normal(0.0, dim ** -0.5, size=(n_words, dim - n_components))
        vectors = np.hstack([vectors, noise])
    matrix[n_special:][known] = vectors[known]
    return matrix, {"found": int(known.sum()), "missing": int((~known).sum())}


def initial_word_vectors(bilm, X, vocabulary, n_specials: int, train_docs, random_state):
    """Where a word-level biLM's embedding starts: ``(vectors, coverage)``.

    The user's ``pretrained_vectors`` (coverage: words found and missing), else with
    ``token_init="svd"`` the SVD vectors of the training documents (the validation ones
    stay unseen; coverage None), else ``(None, None)``: a random start.
    """
    if bilm.token_layer != "word":
        return None, None
    if bilm.pretrained_vectors is not None:
        keyed_vectors = resolve_pretrained(bilm.pretrained_vectors, X,
                                           words=vocabulary.tokens[n_specials:])
        vectors, coverage = pretrained_matrix(keyed_vectors, vocabulary.tokens, n_specials)
        logger.info("pretrained vectors cover %d of %d vocabulary words; %d initialised at random",
                    coverage["found"], len(vocabulary), coverage["missing"])
        return vectors, coverage
    if bilm.token_init == "svd":
        vectors, coverage = corpus_vectors(train_docs, vocabulary, n_specials,
                                           bilm.embedding_dim, random_state)
        logger.info("word embedding starts from the SVD vectors of %d of %d words",
                    coverage["found"], len(vocabulary) - n_specials)
        return vectors, None
    return None, None

