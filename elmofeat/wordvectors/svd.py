"""SVDVectorizer: word vectors from a factorised word-context co-occurrence matrix."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.extmath import randomized_svd

from ..text import DEFAULT_TOKEN_PATTERN, RaggedIds, Vocabulary
from .._param_validation import Interval, Real, StrOptions, positive_int
from .base import BaseWordVectorizer, keyed_vectors_from_arrays

WEIGHTINGS = ("ppmi", "count")
DISTANCE_WEIGHTINGS = ("uniform", "linear", "harmonic")


def cooccurrence_matrix(
    corpus: RaggedIds, n_words: int, window: int, distance_weighting: str = "uniform"
) -> sp.csr_matrix:
    """Symmetric word-context co-occurrence counts within ``window`` tokens.

    Out-of-vocabulary tokens (negative ids) are removed before windowing, as word2vec
    does. A pair at distance ``k`` counts 1 (``"uniform"``), ``(window - k + 1) / window``
    (``"linear"``, the expected weight of word2vec's dynamic window) or ``1 / k``
    (``"harmonic"``, as in GloVe). Windows never cross document boundaries.

    The matrix is built with one sparse matrix per distance, with no Python loop over
    tokens.

    Parameters
    ----------
    corpus : RaggedIds
    n_words : int
        Vocabulary size (the matrix is ``n_words x n_words``).
    window : int
        Largest distance counted.
    distance_weighting : {"uniform", "linear", "harmonic"}

    Returns
    -------
    counts : scipy.sparse.csr_matrix of shape (n_words, n_words), float64

    Examples
    --------
    >>> corpus = RaggedIds(np.array([0, 1, 2, 0]), np.array([0, 3, 4]))
    >>> cooccurrence_matrix(corpus, 3, window=1).toarray()
    array([[0., 1., 0.],
           [1., 0., 1.],
           [0., 1., 0.]])
    """
    if (corpus.ids < 0).any():
        corpus = corpus.drop(corpus.ids < 0)
    ids = corpus.ids.astype(np.int32)
    doc = corpus.document_index()
    upper = sp.csr_matrix((n_words, n_words), dtype=np.float64)
    for k in range(1, window + 1):
        if len(ids) <= k:
            break
        same_doc = doc[:-k] == doc[k:]
        if distance_weighting == "linear":
            weight = (window - k + 1) / window
        elif distance_weighting == "harmonic":
            weight = 1.0 / k
        else:
            weight = 1.0
        rows, cols = ids[:-k][same_doc], ids[k:][same_doc]
        upper = upper + sp.csr_matrix(
            (np.full(len(rows), weight), (rows, cols)), shape=(n_words, n_words)
        )
    return (upper + upper.T).tocsr()


def ppmi_matrix(counts: sp.spmatrix, context_smoothing: float = 0.75) -> sp.csr_matrix:
    """Positive pointwise mutual information of a co-occurrence matrix.

    ``PPMI(w, c) = max(0, log(P(w, c) / (P(w) P_a(c))))`` where the context
    distribution is smoothed, ``P_a(c) = #c^a / sum_c' #c'^a`` (Levy, Goldberg &
    Dagan 2015), which removes PMI's bias towards rare contexts. Only the stored
    (non-zero) entries are touched: the matrix is never densified.

    Parameters
    ----------
    counts : sparse matrix of shape (n_words, n_contexts)
    context_smoothing : float, default=0.75
        The exponent ``a``; 1 is plain PMI.

    Returns
    -------
    ppmi : scipy.sparse.csr_matrix, float32
    """
    counts = sp.csr_matrix(counts, dtype=np.float64)
    row_sums = np.asarray(counts.sum(axis=1)).ravel()
    context = np.asarray(counts.sum(axis=0)).ravel() ** context_smoothing
    context_prob = context / context.sum()
    rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    with np.errstate(divide="ignore"):
        pmi = np.log(counts.data) - np.log(row_sums[rows]) - np.log(context_prob[counts.indices])
    ppmi = sp.csr_matrix(
        (np.maximum(pmi, 0.0).astype(np.float32), counts.indices.copy(), counts.indptr.copy()),
        shape=counts.shape,
    )
    ppmi.eliminate_zeros()
    return ppmi


def svd_word_vectors(
    corpus: RaggedIds,
    n_words: int,
    n_components: int,
    *,
    window: int = 5,
    weighting: str = "ppmi",
    context_smoothing: float = 0.75,
    distance_weighting: str = "linear",
    eig_weighting: float = 0.5,
    n_iter: int = 5,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Word vectors ``U_k * S_k ** eig_weighting`` of a corpus' co-occurrence matrix.

    The core of :class:`SVDVectorizer`, also used to initialise the biLM's word
    embedding from the same texts. Negative ids (out of vocabulary) are skipped.

    Returns
    -------
    vectors : ndarray of shape (n_words, n_components)
        A word that co-occurs with no other word gets a zero row.
    singular_values : ndarray of shape (n_components,), float32

    Raises
    ------
    ValueError
        No two vocabulary words co-occur within ``window``.
    """
    counts = cooccurrence_matrix(corpus, n_words, window, distance_weighting)
    if counts.nnz == 0:
        raise ValueError(
            "no two vocabulary words co-occur within the window: fit on more text or "
            "lower min_count"
        )
    if weighting == "ppmi":
        matrix = ppmi_matrix(counts, context_smoothing)
    else:
        matrix = counts.astype(np.float32)
    U, S, _ = randomized_svd(matrix, n_components, n_iter=n_iter,
                             random_state=check_random_state(random_state))
    return U * (S ** eig_weighting), S.astype(np.float32)


class SVDVectorizer(BaseWordVectorizer):
    """Document features from SVD word vectors (co-occurrence + truncated SVD + pooling).

    ``fit`` counts how often each vocabulary word occurs within ``window`` tokens of
    each other word in the training documents, weights the counts (PPMI with
    context-distribution smoothing by default), factorises the sparse matrix with a
    randomized truncated SVD and keeps ``U_k * S_k ** eig_weighting`` as word vectors.
    ``transform`` pools the vectors of each document's words.

    Parameters
    ----------
    n_components : int, default=300
        Width of the word vectors (number of singular vectors kept).
    window : int, default=5
        Context window: words up to ``window`` tokens to either side count.
    weighting : {"ppmi", "count"}, default="ppmi"
        ``"ppmi"``: positive PMI with smoothed context distribution; ``"count"``: raw
        (distance-weighted) counts.
    context_smoothing : float, default=0.75
        Exponent of the context distribution in PPMI (1 = no smoothing).
    distance_weighting : {"uniform", "linear", "harmonic"}, default="linear"
        How a pair at distance ``k`` counts: 1, ``(window - k + 1) / window`` (as
        word2vec's dynamic window) or ``1 / k``.
    eig_weighting : float in [0, 1], default=0.5
        Exponent ``p`` of the singular values in ``U * S ** p``; 0 gives ``U``, 1 gives
        the classic SVD embedding. 0.5 is symmetric and usually best.
    n_iter : int, default=5
        Power iterations of the randomized SVD.
    min_count : int, default=2
        Words seen fewer times in the training documents are dropped.
    max_features : int, default=None
        Keep only the most frequent words.
    pooling : {"mean", "max", "meanmax"}, default="mean"
        How word vectors become one document vector; ``"meanmax"`` concatenates both.
    norm : {None, "l2"}, default=None
        ``"l2"``: each document's features scaled to unit length (zero rows stay zero).
    dtype : {np.float32, np.float64}, default=np.float32
    lowercase : bool, default=True
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
    tokenizer : callable, default=None
        As in :class:`~sklearn.feature_extraction.text.TfidfVectorizer`.
    random_state : int, RandomState instance or None, default=None
        Seeds the randomized SVD. The same value gives the same vectors.

    Attributes
    ----------
    keyed_vectors_ : gensim.models.KeyedVectors
        The word vectors, with each word's training count in ``get_vecattr(w, "count")``.
    singular_values_ : ndarray of shape (n_components,)

    See Also
    --------
    SkipGramVectorizer : Word vectors from skip-gram with negative sampling.

    Notes
    -----
    Out-of-vocabulary words are ignored by ``transform``; a document without any
    vocabulary word gets a zero vector. The co-occurrence matrix is only ever held in
    sparse form, so vocabularies of 100k words and more fit in memory.

    References
    ----------
    O. Levy, Y. Goldberg and I. Dagan, "Improving Distributional Similarity with
    Lessons Learned from Word Embeddings", TACL 2015.

    Examples
    --------
    >>> from elmofeat import SVDVectorizer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log",
    ...         "cats and dogs", "the mat and the log"]
    >>> vec = SVDVectorizer(n_components=3, min_count=1, random_state=0).fit(docs)
    >>> vec.transform(["a cat on a mat", "unknown words only"]).shape
    (2, 3)
    >>> vec.transform(["unknown words only"])
    array([[0., 0., 0.]], dtype=float32)
    """

    _feature_prefix = "svd"
    _parameter_constraints: dict = {
        **BaseWordVectorizer._text_parameter_constraints,
        **BaseWordVectorizer._output_parameter_constraints,
        "n_components": [positive_int()],
        "window": [positive_int()],
        "weighting": [StrOptions(set(WEIGHTINGS))],
        # Beyond [0, 1] the weights S ** p overflow float32 (p = 32) or blow up the
        # directions of the smallest singular values (p < 0).
        "eig_weighting": [Interval(Real, 0, 1, closed="both")],
        "context_smoothing": [Interval(Real, 0, 1, closed="both")],
        "distance_weighting": [StrOptions(set(DISTANCE_WEIGHTINGS))],
        "n_iter": [positive_int(0)],
        "min_count": [positive_int()],
        "max_features": [positive_int(), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=300,
        *,
        window=5,
        weighting="ppmi",
        context_smoothing=0.75,
        distance_weighting="linear",
        eig_weighting=0.5,
        n_iter=5,
        min_count=2,
        max_features=None,
        pooling="mean",
        norm=None,
        dtype=np.float32,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.window = window
        self.weighting = weighting
        self.context_smoothing = context_smoothing
        self.distance_weighting = distance_weighting
        self.eig_weighting = eig_weighting
        self.n_iter = n_iter
        self.min_count = min_count
        self.max_features = max_features
        self.pooling = pooling
        self.norm = norm
        self.dtype = dtype
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.random_state = random_state

    def _fit_keyed_vectors(self, token_lists):
        random_state = check_random_state(self.random_state)
        vocab = Vocabulary.build(
            token_lists, min_count=self.min_count, max_features=self.max_features
        )
        if len(vocab) < self.n_components:
            raise ValueError(
                f"n_components={self.n_components} is larger than the vocabulary "
                f"({len(vocab)} words with min_count={self.min_count}); lower n_components "
                "or min_count, or fit on more text"
            )
        vectors, self.singular_values_ = svd_word_vectors(
            vocab.encode(token_lists), len(vocab), self.n_components, window=self.window,
            weighting=self.weighting, context_smoothing=self.context_smoothing,
            distance_weighting=self.distance_weighting, eig_weighting=self.eig_weighting,
            n_iter=self.n_iter, random_state=random_state,
        )
        return keyed_vectors_from_arrays(vocab.tokens, vectors, vocab.counts)
