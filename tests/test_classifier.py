"""ElmoClassifier: the text-aware classifier contract (tests/classifier_checks.py) and
what it shares with ElmoVectorizer's fine-tuning."""

import inspect

import pytest

from elmofeat import BiLM, ElmoClassifier

from .classifier_checks import CLASSIFIER_CHECKS
from .estimator_checks import make_topic_corpus

TINY_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus()


@pytest.fixture(scope="module")
def tiny(corpus):
    return BiLM(**TINY_BILM).fit(corpus[0])


CLASSIFIERS = {
    "fitted-bilm": lambda tiny: ElmoClassifier(tiny, epochs=2, learning_rate=3e-3,
                                               random_state=0),
    "pretrained-on-X, gradual": lambda tiny: ElmoClassifier(
        BiLM(**TINY_BILM), epochs=2, gradual_unfreezing=True, C=1.0, cache_dir=None,
        random_state=0),
}


@pytest.mark.parametrize("make", CLASSIFIERS.values(), ids=CLASSIFIERS.keys())
@pytest.mark.parametrize("check", CLASSIFIER_CHECKS, ids=lambda c: c.__name__)
def test_classifier_contract(make, check, corpus, tiny, tmp_path):
    X, y = corpus
    if "tmp_path" in inspect.signature(check).parameters:
        check(make(tiny), X, y, tmp_path=tmp_path)
    else:
        check(make(tiny), X, y)
