import tracemalloc

import numpy as np
import pytest

from elmofeat import SVDVectorizer
from elmofeat.text import RaggedIds
from elmofeat.wordvectors.svd import cooccurrence_matrix, ppmi_matrix

from .estimator_checks import make_topic_corpus


def _naive_cooccurrence(docs, n_words, window, weighting):
    counts = np.zeros((n_words, n_words))
    for doc in docs:
        doc = [t for t in doc if t >= 0]
        for i, a in enumerate(doc):
            for k in range(1, window + 1):
                if i + k < len(doc):
                    w = {"uniform": 1.0, "linear": (window - k + 1) / window, "harmonic": 1 / k}[
                        weighting
                    ]
                    counts[a, doc[i + k]] += w
                    counts[doc[i + k], a] += w
    return counts


@pytest.mark.parametrize("weighting", ["uniform", "linear", "harmonic"])
@pytest.mark.parametrize("window", [1, 3])
def test_cooccurrence_matches_naive_count_and_respects_documents(weighting, window):
    rng = np.random.RandomState(0)
    docs = [list(rng.randint(-1, 12, size=rng.randint(0, 15))) for _ in range(30)]
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    corpus = RaggedIds(np.concatenate(docs).astype(np.int64), offsets)
    got = cooccurrence_matrix(corpus, 12, window, weighting).toarray()
    np.testing.assert_allclose(got, _naive_cooccurrence(docs, 12, window, weighting))


def test_ppmi_matches_dense_formula_with_context_smoothing():
    rng = np.random.RandomState(1)
    counts = rng.poisson(1.0, size=(8, 8)).astype(float)
    counts = counts + counts.T
    ppmi = ppmi_matrix(counts, 0.75).toarray()
    pc = counts.sum(0) ** 0.75
    pc /= pc.sum()
    with np.errstate(divide="ignore"):
        expected = np.log(counts / counts.sum(1, keepdims=True) / pc[None, :])
    expected = np.maximum(np.nan_to_num(expected, neginf=0), 0)
    np.testing.assert_allclose(ppmi, expected, rtol=1e-5, atol=1e-6)


def test_word_vectors_are_scaled_singular_vectors_of_ppmi():
    docs, _ = make_topic_corpus(80)
    vec = SVDVectorizer(n_components=5, min_count=1, eig_weighting=0.5, n_iter=10, random_state=0)
    vec.fit(docs)
    kv = vec.keyed_vectors_
    tokens = [d.lower().strip(".").split() for d in docs]
    from elmofeat.text import Vocabulary

    vocab = Vocabulary.build(tokens)
    assert kv.index_to_key == vocab.tokens
    dense = ppmi_matrix(cooccurrence_matrix(vocab.encode(tokens), len(vocab), 5, "linear")).toarray()
    s = np.linalg.svd(dense, compute_uv=False)[:5]
    np.testing.assert_allclose(vec.singular_values_, s, rtol=1e-3)
    # Row norms of U * S^0.5 equal those of the dense decomposition's top-5 part.
    u, s_full, _ = np.linalg.svd(dense)
    ref = u[:, :5] * s_full[:5] ** 0.5
    np.testing.assert_allclose(
        np.linalg.norm(kv.vectors, axis=1), np.linalg.norm(ref, axis=1), rtol=1e-2, atol=1e-3
    )


def test_topic_words_are_closer_to_each_other_than_to_other_topics():
    docs, _ = make_topic_corpus(400)
    kv = SVDVectorizer(n_components=10, min_count=1, random_state=0).fit(docs).keyed_vectors_
    same = kv.similarity("topic0word1", "topic0word2")
    other = kv.similarity("topic0word1", "topic2word2")
    assert same > other + 0.2


def test_count_weighting_and_eig_exponent_change_vectors():
    docs, _ = make_topic_corpus(60)
    base = SVDVectorizer(n_components=4, min_count=1, random_state=0).fit(docs)
    for params in ({"weighting": "count"}, {"eig_weighting": 0.0}):
        other = SVDVectorizer(n_components=4, min_count=1, random_state=0, **params).fit(docs)
        assert not np.allclose(base.keyed_vectors_.vectors, other.keyed_vectors_.vectors)
    u_only = SVDVectorizer(n_components=4, min_count=1, eig_weighting=0.0, random_state=0).fit(docs)
    np.testing.assert_allclose(np.linalg.norm(u_only.keyed_vectors_.vectors, axis=0), 1, rtol=1e-4)


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"n_components": 0}, ValueError, "n_components"),
        ({"n_components": 2.5}, TypeError, "n_components"),
        ({"window": 0}, ValueError, "window"),
        ({"weighting": "tfidf"}, ValueError, "'weighting' parameter of SVDVectorizer must be a str among"),
        ({"distance_weighting": "cubic"}, ValueError, "'distance_weighting' parameter of SVDVectorizer must be a str among"),
        ({"context_smoothing": 2}, ValueError, "context_smoothing"),
        ({"min_count": 0}, ValueError, "min_count"),
        ({"n_components": 500}, ValueError, "larger than the vocabulary"),
        ({"eig_weighting": float("nan")}, ValueError, "'eig_weighting' parameter .* Got nan"),
        ({"eig_weighting": 32.0}, ValueError, r"'eig_weighting' parameter .* range \[0.0, 1.0\]. Got 32.0"),
        ({"eig_weighting": -0.5}, ValueError, "'eig_weighting' parameter .* Got -0.5"),
        ({"context_smoothing": float("nan")}, ValueError, "'context_smoothing' parameter .* Got nan"),
    ],
)
def test_bad_parameters_raise_at_fit(params, error, match):
    docs, _ = make_topic_corpus(40)
    vec = SVDVectorizer(**{"n_components": 4, "min_count": 1, **params})
    with pytest.raises(error, match=match):
        vec.fit(docs)


def test_no_cooccurrence_is_a_clear_error():
    with pytest.raises(ValueError, match="co-occur"):
        SVDVectorizer(n_components=2, min_count=1).fit(["alpha", "beta", "gamma"])


def test_hundred_thousand_word_vocabulary_stays_sparse():
    # 100k distinct words: a dense co-occurrence matrix would need 40 GB.
    rng = np.random.RandomState(0)
    n_words = 100_000
    ids = np.concatenate([np.arange(n_words), rng.zipf(1.2, size=400_000) % n_words])
    rng.shuffle(ids)
    words = np.char.add("w", ids.astype(str))
    docs = [" ".join(chunk) for chunk in np.array_split(words, 10_000)]
    vec = SVDVectorizer(n_components=8, min_count=1, n_iter=2, random_state=0)
    tracemalloc.start()
    vec.fit(docs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(vec.keyed_vectors_) == n_words
    assert peak < 2e9, f"peak traced memory {peak / 1e9:.1f} GB"
    out = vec.transform(docs[:5])
    assert out.shape == (5, 8) and np.isfinite(out).all()
