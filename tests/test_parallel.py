"""Thread budgets of parallel workers, and the Dask recipe of the user guide on a LocalCluster."""

import logging

import numpy as np
import pytest

from elmofeat import ElmoVectorizer
from elmofeat.runtime import parallel as _parallel
from elmofeat.bilm import BiLM

from .estimator_checks import make_topic_corpus

SMALL_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


def test_budget_outside_dask_shares_this_machines_cores(monkeypatch):
    monkeypatch.setattr(_parallel, "cpu_count", lambda: 8)
    assert _parallel.worker_thread_budget(2) == 4
    assert _parallel.worker_thread_budget(3) == 2
    assert _parallel.worker_thread_budget(16) == 1  # never zero
    assert _parallel.worker_thread_budget(0) == 8


@pytest.fixture(scope="module")
def cluster_client():
    import distributed  # dask[distributed] is in the test extra

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_budget_is_counted_on_the_dask_worker(cluster_client):
    from joblib import cpu_count

    # The client passes n_parts=1; the worker knows its host has 2 task slots.
    budgets = {cluster_client.submit(_parallel.worker_thread_budget, 1, pure=False,
                                     workers=[address]).result()
               for address in cluster_client.nthreads()}
    assert budgets == {max(1, cpu_count() // 2)}


def test_dask_recipe_equals_sequential_transform(cluster_client):
    import joblib

    corpus = make_topic_corpus(120)
    documents = (corpus[0] * 10)[:1100]  # two parts of at least 512 documents
    vectorizer = ElmoVectorizer(BiLM(**SMALL_BILM), layer_mix="frozen", cache_dir=None,
                                random_state=0).fit(documents)
    expected = vectorizer.transform(documents)
    with joblib.parallel_config(backend="dask", n_jobs=len(cluster_client.nthreads())):
        features = vectorizer.transform(documents)
    assert features.dtype == expected.dtype and features.shape == expected.shape
    pooled = expected.shape[1] - vectorizer.bag_.n_features
    np.testing.assert_allclose(features[:, :pooled], expected[:, :pooled], rtol=1e-4, atol=1e-5)
    # the bag: a worker's other thread count may change a layer's last bits, and a token
    # at a near tie between two codes may take the other one (a few documents at most)
    close = np.isclose(features[:, pooled:], expected[:, pooled:], rtol=1e-4, atol=1e-5)
    assert close.all(axis=1).mean() >= 0.98
