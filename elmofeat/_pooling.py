"""Pooling of token vectors into fixed-size document vectors, shared by every vectorizer.

A document with no (in-vocabulary) token gets a zero vector under every pooling
method: never NaN, never ``-inf``.

Two entry points:

* :func:`pool_vectors` pools token vectors that are already computed (the biLM's
  contextual vectors), given document offsets;
* :func:`pool_lookup` pools rows of a word-vector table addressed by token ids
  (SVD and skip-gram vectors) without materialising every token's vector for the
  mean, which becomes one sparse matrix product.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp

from .text import RaggedIds

POOLING_METHODS = ("mean", "max", "meanmax")

# Rows gathered at once by max pooling over a lookup table (bounds peak memory).
_MAX_GATHER_ELEMENTS = 1 << 22


def check_pooling(pooling) -> str:
    """Return ``pooling`` if valid, else raise a ``ValueError`` listing the choices."""
    if not isinstance(pooling, str) or pooling not in POOLING_METHODS:
        raise ValueError(f"pooling must be one of {POOLING_METHODS}, got {pooling!r}")
    return pooling


def pooled_feature_names(prefix: str, dim: int, pooling: str) -> np.ndarray:
    """Feature names such as ``svd_mean0 ... svd_max299`` for a pooled output."""
    parts = ["mean", "max"] if check_pooling(pooling) == "meanmax" else [pooling]
    return np.asarray(
        [f"{prefix}_{part}{i}" for part in parts for i in range(dim)], dtype=object
    )


def _segment_max(vectors: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Max over each non-empty segment ``vectors[offsets[i]:offsets[i+1]]``; zeros if empty."""
    n_docs = len(offsets) - 1
    out = np.zeros((n_docs, vectors.shape[1]), dtype=np.float32)
    lengths = np.diff(offsets)
    nonempty = np.flatnonzero(lengths > 0)
    if not len(nonempty):
        return out
    torch = sys.modules.get("torch")
    if torch is not None and vectors.dtype == np.float32:
        # Same maxima, much faster than reduceat along axis 0 (which walks each column
        # with a stride of a row); used where torch is loaded anyway (ELMo).
        segments = np.ascontiguousarray(vectors[offsets[0]:offsets[-1]])
        with warnings.catch_warnings():  # a read-only array (a memory map) is only read
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            segments = torch.from_numpy(segments)
        out[nonempty] = torch.segment_reduce(
            segments, "max", lengths=torch.from_numpy(lengths[nonempty].astype(np.int64)),
            axis=0).numpy()
    else:
        out[nonempty] = np.maximum.reduceat(vectors, offsets[nonempty], axis=0)
    return out


def _segment_mean(vectors: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean over each segment, summed in float64; zeros for an empty segment.

    One sum along axis 0 per document: numpy adds a contiguous block a row at a time,
    vectorised along the row, casting in small buffers (no float64 copy of the block).
    Measured faster than a sparse 0/1 product (scipy first copies the vectors to float64)
    and far faster than ``np.add.reduceat`` along axis 0 (it walks each column with a
    stride of a whole row), for short and long documents alike. Each document's sum
    depends on its own rows alone.
    """
    n_docs, dim = len(offsets) - 1, vectors.shape[1]
    out = np.zeros((n_docs, dim), dtype=np.float32)
    for i in np.flatnonzero(np.diff(offsets) > 0):
        lo, hi = offsets[i], offsets[i + 1]
        out[i] = vectors[lo:hi].sum(axis=0, dtype=np.float64) / (hi - lo)
    return out


def pool_vectors(vectors: np.ndarray, offsets: np.ndarray, pooling: str) -> np.ndarray:
    """Pool token vectors per document.

    Parameters
    ----------
    vectors : ndarray of shape (n_tokens, dim)
        Token vectors of all documents, concatenated.
    offsets : ndarray of shape (n_documents + 1,)
        Document ``i`` owns rows ``offsets[i]:offsets[i + 1]``.
    pooling : {"mean", "max", "meanmax"}

    Returns
    -------
    pooled : ndarray of shape (n_documents, dim) or (n_documents, 2 * dim), float32
        Empty documents get zeros.

    Examples
    --------
    >>> v = np.array([[1., 2.], [3., 0.], [5., 5.]])
    >>> pool_vectors(v, np.array([0, 2, 2, 3]), "meanmax")
    array([[2., 1., 3., 2.],
           [0., 0., 0., 0.],
           [5., 5., 5., 5.]], dtype=float32)
    """
    check_pooling(pooling)
    offsets = np.asarray(offsets, dtype=np.int64)
    if pooling == "mean":
        return _segment_mean(vectors, offsets)
    if pooling == "max":
        return _segment_max(vectors, offsets)
    return np.hstack([_segment_mean(vectors, offsets), _segment_max(vectors, offsets)])


def _lookup_mean(corpus: RaggedIds, table: np.ndarray) -> np.ndarray:
    # Document-by-word count matrix straight from the ragged ids: the mean is then one
    # sparse-dense product, with no (n_tokens, dim) intermediate.
    counts = sp.csr_matrix(
        (np.ones(len(corpus.ids), dtype=table.dtype), corpus.ids, corpus.offsets),
        shape=(corpus.n_documents, table.shape[0]),
    )
    sums = np.asarray(counts @ table, dtype=np.float64)
    lengths = corpus.lengths
    out = np.zeros((corpus.n_documents, table.shape[1]), dtype=np.float32)
    nonempty = lengths > 0
    out[nonempty] = sums[nonempty] / lengths[nonempty, None]
    return out


def _lookup_max(corpus: RaggedIds, table: np.ndarray) -> np.ndarray:
    out = np.zeros((corpus.n_documents, table.shape[1]), dtype=np.float32)
    rows_per_chunk = max(1, _MAX_GATHER_ELEMENTS // max(1, table.shape[1]))
    offsets = corpus.offsets
    start = 0
    while start < corpus.n_documents:
        # Whole documents per chunk, about rows_per_chunk tokens each.
        stop = int(np.searchsorted(offsets, offsets[start] + rows_per_chunk, side="right")) - 1
        stop = min(max(stop, start + 1), corpus.n_documents)
        lo, hi = offsets[start], offsets[stop]
        out[start:stop] = _segment_max(table[corpus.ids[lo:hi]], offsets[start : stop + 1] - lo)
        start = stop
    return out


def pool_lookup(corpus: RaggedIds, table: np.ndarray, pooling: str) -> np.ndarray:
    """Pool rows of a word-vector ``table`` for each document of ``corpus``.

    Tokens with a negative id (out of vocabulary) are ignored; a document left with
    no token gets a zero vector.

    Parameters
    ----------
    corpus : RaggedIds
    table : ndarray of shape (vocabulary_size, dim)
    pooling : {"mean", "max", "meanmax"}

    Returns
    -------
    pooled : ndarray of shape (n_documents, dim) or (n_documents, 2 * dim), float32
    """
    check_pooling(pooling)
    if (corpus.ids < 0).any():
        corpus = corpus.drop(corpus.ids < 0)
    if pooling == "mean":
        return _lookup_mean(corpus, table)
    if pooling == "max":
        return _lookup_max(corpus, table)
    return np.hstack([_lookup_mean(corpus, table), _lookup_max(corpus, table)])


def segment_pool(tokens, offsets: np.ndarray, pooling: str):
    """:func:`pool_vectors` of a torch tensor ``(n_tokens, dim)``, with autograd.

    Empty documents give 0. ``torch.segment_reduce`` (about 50x faster than
    ``index_add_`` here); torch is imported only by the callers that train a mix.
    """
    import torch

    lengths = torch.from_numpy(np.diff(offsets))
    sums = torch.segment_reduce(tokens, "sum", lengths=lengths)
    mean = sums / lengths.clamp(min=1).unsqueeze(1).to(tokens.dtype)
    if pooling == "mean":
        return mean
    mx = torch.segment_reduce(tokens, "max", lengths=lengths)  # -inf for empty documents
    mx = torch.where((lengths > 0).unsqueeze(1), mx, torch.zeros_like(mx))
    return mx if pooling == "max" else torch.cat([mean, mx], dim=1)
