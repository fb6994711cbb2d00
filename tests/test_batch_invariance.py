"""A document's representations and features depend on that document alone: not on the
other documents embedded or transformed with it, nor on the inference batch size, to
the last bit (on a CPU).

Widths here are realistic (64 and more): BLAS's summation order for a small product
differs from a large one's at such widths, and the tiny test models elsewhere can miss it.
"""

import numpy as np
import pytest

import elmofeat
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.bilm.batching import inference_batches
from elmofeat.runtime.torch_helpers import MIN_PRODUCT_ROWS, fill_rows
from elmofeat.mixes import mix_names
from elmofeat.mixes.base import rowwise_product

from .estimator_checks import make_topic_corpus


@pytest.fixture(scope="module")
def corpus():
    docs, labels = make_topic_corpus(160, seed=3)
    # Lengths from one token to several windows (max_len=16 below).
    docs[0], docs[1], docs[2] = "Word.", "", " ".join(docs[3:9])
    return docs, labels


BILMS = {
    # nn.LSTM through oneDNN: a single-row batch took the matrix-vector path.
    "word": dict(embedding_dim=64, hidden_dim=64),
    # Projected LSTMs run torch's own kernel (MKL products): batches of fewer than 12
    # rows summed differently, on 2 threads even at 5 to 11 rows.
    "projected": dict(embedding_dim=64, hidden_dim=128, n_threads=2),
    "char": dict(token_layer="char", embedding_dim=64, hidden_dim=64,
                 char_filters=((1, 16), (2, 16), (3, 32))),
}


@pytest.fixture(scope="module", params=sorted(BILMS))
def bilm(request, corpus):
    return BiLM(**BILMS[request.param], max_len=16, max_epochs=1, batch_size=16,
                random_state=0).fit(corpus[0])


def _assert_same_layers(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_a_document_embedded_alone_gets_the_layers_it_gets_among_others(corpus, bilm):
    X = corpus[0]
    together = bilm.embed(X)
    _assert_same_layers([bilm.embed([doc])[0] for doc in X[:24]], together[:24])
    rng = np.random.default_rng(0)
    for size in (2, 5, 11, 37):
        subset = np.sort(rng.choice(len(X), size, replace=False))
        _assert_same_layers(bilm.embed([X[i] for i in subset]), [together[i] for i in subset])


def test_the_inference_batch_size_does_not_change_the_layers(corpus, bilm):
    X = corpus[0][:40]
    expected = bilm.embed(X)
    for batch_size in (1, 3, 17, 1000):
        _assert_same_layers(bilm.embed(X, batch_size=batch_size), expected)


@pytest.mark.parametrize("pooling", ["mean", "meanmax"])
@pytest.mark.parametrize("layer_mix", mix_names())
def test_a_document_transformed_alone_gets_the_features_it_gets_among_others(
        corpus, layer_mix, pooling):
    X, y = corpus
    bilm = BiLM(**BILMS["word"], max_len=16, max_epochs=1, batch_size=16,
                random_state=0).fit(X)
    # No representation cache: every transform computes its documents' layers.
    with elmofeat.config_context(representation_cache_bytes=0):
        vectorizer = ElmoVectorizer(bilm, layer_mix=layer_mix, pooling=pooling, mlp_dim=64,
                                    mix_epochs=1, cache_dir=None, random_state=0).fit(X, y)
        together = vectorizer.transform(X)
        alone = np.vstack([vectorizer.transform([doc]) for doc in X[:24]])
        pair = vectorizer.transform([X[5], X[40]])
    assert np.abs(together).sum() > 0
    np.testing.assert_array_equal(alone, together[:24])
    np.testing.assert_array_equal(pair, together[[5, 40]])
    np.testing.assert_array_equal(together[1], 0.0)  # the empty document


def test_inference_batches_have_at_least_the_minimum_rows_and_every_window():
    lengths = np.array([5, 3, 9, 4, 7, 2, 8, 6, 3, 5])
    for batch_size in (1, 4, 16, 100):
        batches = inference_batches(lengths, batch_size)
        assert all(len(batch) >= MIN_PRODUCT_ROWS for batch in batches)
        assert set(np.concatenate(batches)) == set(range(len(lengths)))
        # Each window is run once, plus copies that fill a small batch up.
        assert len(np.concatenate(batches)) == max(len(lengths), MIN_PRODUCT_ROWS)
    lengths = np.arange(40)
    batches = inference_batches(lengths, 16)
    assert [len(b) for b in batches] == [16, 16, 16]  # the last 8 windows, then 8 copies
    assert sorted(np.concatenate(batches[:2])) == list(range(32))


def test_rowwise_product_is_the_product_with_each_row_alone():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((23, 96)).astype(np.float32)
    b = rng.standard_normal((96, 40)).astype(np.float32)
    product = rowwise_product(a, b)
    assert product.dtype == np.float32 and product.shape == (23, 40)
    np.testing.assert_allclose(product, a @ b, rtol=1e-5, atol=1e-5)
    for i in (0, 7, 22):
        np.testing.assert_array_equal(product[i], rowwise_product(a[i : i + 1], b)[0])
    assert rowwise_product(a[:0], b).shape == (0, 40)


def test_fill_rows_repeats_the_rows_in_turn_and_keeps_them_first():
    import torch

    x = torch.arange(6.0).reshape(3, 2)
    filled = fill_rows(x)
    assert filled.shape == (MIN_PRODUCT_ROWS, 2)
    assert torch.equal(filled[:3], x) and torch.equal(filled[3:6], x)
    assert torch.equal(filled[-1], x[(MIN_PRODUCT_ROWS - 1) % 3])
    big = torch.zeros(MIN_PRODUCT_ROWS + 1, 2)
    assert fill_rows(big) is big
    empty = torch.zeros(0, 2)
    assert fill_rows(empty) is empty
