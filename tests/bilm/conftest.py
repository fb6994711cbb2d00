"""Shared fixtures of the biLM tests: a small topic corpus and a tiny fitted BiLM."""

import pytest

from elmofeat import BiLM
from ..estimator_checks import make_topic_corpus


TINY = dict(embedding_dim=16, hidden_dim=16, max_epochs=2, batch_size=16, random_state=0)


@pytest.fixture(scope="package")
def corpus():
    docs, _ = make_topic_corpus(160)
    return docs


@pytest.fixture(scope="package")
def fitted(corpus):
    return BiLM(**TINY).fit(corpus)


def weights_of(bilm):
    return {k: v.clone() for k, v in bilm.language_model_.state_dict().items()}

