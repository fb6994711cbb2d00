"""Pretrained word vectors for the biLM's word embedding."""

from __future__ import annotations

import logging
import os

import numpy as np

from ..wordvectors.io import check_finite_vectors, load_word_vectors

logger = logging.getLogger("elmofeat")


def resolve_pretrained(pretrained, texts, words=None, first: int = 0):
    """KeyedVectors from a path, KeyedVectors or (fitted or unfitted) word-vector vectorizer.

    ``words``: the vocabulary, when known; a file is then read for those words (and its
    ``first`` rows) only (a 400,000-word GloVe file costs seconds and megabytes instead
    of minutes and gigabytes).
    """
    from gensim.models import KeyedVectors
    from sklearn.base import clone

    if isinstance(pretrained, (str, os.PathLike)):
        return load_word_vectors(pretrained, words, first)
    if isinstance(pretrained, KeyedVectors):
        return check_finite_vectors(pretrained, "pretrained_vectors")
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

    ``token_lists``: the documents' tokens, or a callable that returns them already
    encoded (:class:`~elmofeat.text.RaggedIds` of vocabulary ids: a streamed corpus).

    Returns
    -------
    matrix : ndarray of shape (len(vocabulary), dim), float32
        NaN rows for the ``n_special`` special tokens and for words that co-occur with
        no other word (the embedding draws those at random).
    coverage : dict
        ``{"found": ..., "missing": ...}`` words with and without a vector.
    """
    from ..text import RaggedIds
    from ..wordvectors.svd import svd_word_vectors

    n_words = len(vocabulary) - n_special
    matrix = np.full((len(vocabulary), dim), np.nan, dtype=np.float32)
    n_components = min(dim, n_words - 1)
    if n_components < 1:
        return matrix, {"found": 0, "missing": n_words}
    corpus = token_lists() if callable(token_lists) else vocabulary.encode(token_lists)
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


def with_pretrained_words(vocabulary, keyed_vectors, n_words: int):
    """``vocabulary`` followed by the first ``n_words`` words of ``keyed_vectors`` (in
    its order: frequency order for GloVe and word2vec files) that it lacks, with count 0.

    The biLM reads these words (their vectors start its embedding) but never predicts
    them: its softmax covers the corpus words alone.
    """
    from ..text import Vocabulary

    known = set(vocabulary.tokens)
    extra = [w for w in keyed_vectors.index_to_key[:n_words] if w not in known]
    return Vocabulary(vocabulary.tokens + extra,
                      np.concatenate([vocabulary.counts, np.zeros(len(extra), np.int64)]),
                      unknown=vocabulary.unknown)


def initial_word_vectors(bilm, X, vocabulary, n_specials: int, train_docs, random_state):
    """Where a word-level biLM's embedding starts: ``(vectors, coverage, vocabulary)``.

    The user's ``pretrained_vectors`` (coverage: words found and missing), else with
    ``token_init="svd"`` the SVD vectors of the training documents (the validation ones
    stay unseen; coverage None), else ``(None, None)``: a random start. ``vocabulary``
    is the one given, followed by ``bilm.pretrained_words`` words of the pretrained
    vectors that it lacks (see :func:`with_pretrained_words`).
    """
    if bilm.token_layer != "word":
        return None, None, vocabulary
    if bilm.pretrained_vectors is not None:
        extra = bilm.pretrained_words or 0
        keyed_vectors = resolve_pretrained(bilm.pretrained_vectors, X,
                                           words=vocabulary.tokens[n_specials:], first=extra)
        if extra:
            vocabulary = with_pretrained_words(vocabulary, keyed_vectors, extra)
        vectors, coverage = pretrained_matrix(keyed_vectors, vocabulary.tokens, n_specials)
        logger.info("pretrained vectors cover %d of %d vocabulary words; %d initialised at random",
                    coverage["found"], len(vocabulary), coverage["missing"])
        return vectors, coverage, vocabulary
    if bilm.token_init == "svd":
        vectors, coverage = corpus_vectors(train_docs, vocabulary, n_specials,
                                           bilm.embedding_dim, random_state)
        logger.info("word embedding starts from the SVD vectors of %d of %d words",
                    coverage["found"], len(vocabulary) - n_specials)
        return vectors, None, vocabulary
    return None, None, vocabulary


def mapped_vectors(corpus_ids, n_words: int, n_special: int, known: np.ndarray,
                   targets: np.ndarray, random_state, max_dim: int = 100) -> np.ndarray | None:
    """Vectors in a model's embedding space for words it has never read, from their
    co-occurrences in new texts.

    The PPMI + SVD vectors of the new texts' words (:func:`corpus_vectors`' recipe) are
    mapped into the embedding space by the least-squares linear map that best sends the
    words known to both (``known``: vocabulary ids of the new texts' vocabulary whose
    embedding rows are ``targets``) onto their embedding rows (Mikolov et al. 2013's
    translation matrix, between two vector spaces of one language).

    Parameters
    ----------
    corpus_ids : RaggedIds
        The new texts in their own vocabulary's ids (specials below ``n_special``).
    n_words : int
        Size of that vocabulary, specials included.
    known : ndarray of int
        Ids (in that vocabulary) of words the model already reads.
    targets : ndarray of shape (len(known), width)
        Their rows of the model's embedding.

    Returns
    -------
    vectors : ndarray of shape (n_words, width) or None
        Every word's mapped vector (NaN rows for specials and words without
        co-occurrences); None when too few words are shared to fit the map (fewer than
        twice its input width).
    """
    from ..text import RaggedIds
    from ..wordvectors.svd import svd_word_vectors

    n_plain = n_words - n_special
    dim = min(max_dim, n_plain - 1, len(known) // 2)
    if dim < 2:
        return None
    ids = np.where(corpus_ids.ids < n_special, -1, corpus_ids.ids - n_special)
    try:
        vectors, _ = svd_word_vectors(RaggedIds(ids, corpus_ids.offsets), n_plain, dim,
                                      random_state=random_state)
    except ValueError:
        return None
    source = np.full((n_words, dim), np.nan, dtype=np.float64)
    source[n_special:] = vectors
    has_vector = np.linalg.norm(source[known], axis=1) > 0
    if has_vector.sum() < 2 * dim:
        return None
    x, y = source[known][has_vector], np.asarray(targets, np.float64)[has_vector]
    mapping, *_ = np.linalg.lstsq(np.hstack([x, np.ones((len(x), 1))]), y, rcond=None)
    mapped = np.hstack([source, np.ones((n_words, 1))]) @ mapping
    mapped[:n_special] = np.nan
    mapped[n_special:][np.linalg.norm(vectors, axis=1) == 0] = np.nan
    return mapped.astype(np.float32)
