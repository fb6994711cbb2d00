import warnings

import numpy as np
import pytest

from elmofeat import _pooling
from elmofeat._pooling import pool_lookup, pool_vectors, pooled_feature_names
from elmofeat.text import RaggedIds


def _random_ragged(rng, n_docs=40, vocab=25, max_len=12):
    lengths = rng.randint(0, max_len, size=n_docs)
    lengths[[0, 7]] = 0  # make sure some documents are empty
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return RaggedIds(rng.randint(-1, vocab, size=offsets[-1]), offsets)


def _naive(table, corpus, pooling):
    rows = []
    for i in range(corpus.n_documents):
        ids = corpus[i][corpus[i] >= 0]
        vecs = table[ids]
        mean = vecs.mean(0) if len(ids) else np.zeros(table.shape[1])
        mx = vecs.max(0) if len(ids) else np.zeros(table.shape[1])
        rows.append({"mean": mean, "max": mx, "meanmax": np.concatenate([mean, mx])}[pooling])
    return np.asarray(rows)


@pytest.mark.parametrize("pooling", ["mean", "max", "meanmax"])
def test_pool_lookup_matches_naive_loop_and_ignores_oov(pooling):
    rng = np.random.RandomState(0)
    table = rng.randn(25, 6).astype(np.float32)
    corpus = _random_ragged(rng)
    out = pool_lookup(corpus, table, pooling)
    assert out.dtype == np.float32 and out.shape == (40, 12 if pooling == "meanmax" else 6)
    np.testing.assert_allclose(out, _naive(table, corpus, pooling), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[[0, 7]], 0)


@pytest.mark.parametrize("pooling", ["mean", "max", "meanmax"])
def test_pool_vectors_matches_naive_loop(pooling):
    rng = np.random.RandomState(1)
    corpus = _random_ragged(rng, vocab=1000)
    vectors = rng.randn(len(corpus.ids), 5).astype(np.float32) - 3  # all negative: max must not be 0
    table_ids = RaggedIds(np.arange(len(corpus.ids)), corpus.offsets)
    out = pool_vectors(vectors, corpus.offsets, pooling)
    np.testing.assert_allclose(out, _naive(vectors, table_ids, pooling), rtol=1e-5, atol=1e-6)


def test_max_pooling_in_chunks_gives_the_same_result(monkeypatch):
    rng = np.random.RandomState(2)
    table = rng.randn(25, 4).astype(np.float32)
    corpus = _random_ragged(rng)
    whole = pool_lookup(corpus, table, "max")
    monkeypatch.setattr(_pooling, "_MAX_GATHER_ELEMENTS", 8)  # two tokens per chunk
    np.testing.assert_array_equal(pool_lookup(corpus, table, "max"), whole)


def test_all_oov_and_empty_corpus_give_zeros_not_nan():
    table = np.ones((3, 2), dtype=np.float32)
    corpus = RaggedIds(np.array([-1, -1]), np.array([0, 2, 2]))
    for pooling in ("mean", "max", "meanmax"):
        out = pool_lookup(corpus, table, pooling)
        assert np.isfinite(out).all() and not out.any()
    empty = RaggedIds(np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64))
    assert pool_lookup(empty, table, "meanmax").shape == (0, 4)


def test_bad_pooling_and_feature_names():
    with pytest.raises(ValueError, match="pooling must be one of"):
        pool_vectors(np.zeros((1, 2)), np.array([0, 1]), "median")
    assert list(pooled_feature_names("svd", 2, "meanmax")) == [
        "svd_mean0", "svd_mean1", "svd_max0", "svd_max1"
    ]


@pytest.mark.parametrize("with_torch", [True, False])
@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_fast_segment_reductions_match_numpys_reduceat(monkeypatch, with_torch, pooling):
    """Mean pooling sums each document by itself, max pooling uses torch where it is
    loaded: the results equal reduceat's, for empty documents and read-only arrays too."""
    import sys

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((400, 6)).astype(np.float32)
    vectors.flags.writeable = False
    offsets = np.array([0, 0, 3, 3, 150, 151, 400])
    if with_torch:
        import torch  # noqa: F401  (loaded: the torch path is taken)
    else:
        monkeypatch.delitem(sys.modules, "torch", raising=False)
    nonempty = np.flatnonzero(np.diff(offsets) > 0)
    if pooling == "mean":
        sums = np.add.reduceat(vectors, offsets[nonempty], axis=0, dtype=np.float64)
        expected = (sums / np.diff(offsets)[nonempty, None]).astype(np.float32)
    else:
        expected = np.maximum.reduceat(vectors, offsets[nonempty], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pooled = pool_vectors(vectors, offsets, pooling)
    np.testing.assert_array_equal(pooled[nonempty], expected)
    assert not pooled[[0, 2]].any()
