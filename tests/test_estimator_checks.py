"""Run the text-aware estimator check suite over every vectorizer and the biLM."""

import inspect

import pytest

import numpy as np
from gensim.models import KeyedVectors

from elmofeat import BiLM, ElmoVectorizer, SkipGramVectorizer, SVDVectorizer, WordVectorsVectorizer

from .estimator_checks import CHECKS, LANGUAGE_MODEL_CHECKS, make_topic_corpus

# Small models: the suite checks the contract, not quality.
TINY_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)

def _word_vectors():
    """Random vectors for most of the test corpus's words (some stay unknown)."""
    words = sorted({w.lower() for doc in make_topic_corpus()[0] for w in doc.split()})[::2]
    kv = KeyedVectors(vector_size=6)
    kv.add_vectors(words, np.random.RandomState(0).randn(len(words), 6).astype(np.float32))
    return kv


ESTIMATORS = [
    WordVectorsVectorizer(_word_vectors()),
    WordVectorsVectorizer(_word_vectors(), pooling="meanmax"),
    SVDVectorizer(n_components=8, min_count=1, random_state=0),
    SVDVectorizer(n_components=6, min_count=2, weighting="count", pooling="meanmax", random_state=1),
    SkipGramVectorizer(vector_size=8, min_count=1, epochs=3, random_state=0),
    SkipGramVectorizer(vector_size=6, min_count=1, epochs=2, pooling="max", random_state=3),
    # unseeded, so without the bag (an unseeded fit draws its own codebook)
    ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="frozen", bag_size=None, cache_dir=None),
    ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="trainable", pooling="meanmax", mix_epochs=2, cv=2,
                   cache_dir=None, random_state=0),
    ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="mlp", mlp_dim=16, mix_epochs=5, cv=2,
                   cache_dir=None, random_state=0),
    ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="trainable", bag_size=6, mix_epochs=2, cv=2,
                   cache_dir=None, random_state=0),
    ElmoVectorizer(BiLM(**TINY_BILM), fine_tune_epochs=1, bag_size=6, cv=2, cache_dir=None,
                   random_state=0),
]


def _id(estimator):
    changed = {k: v for k, v in estimator.get_params(deep=False).items()
               if k in ("pooling", "weighting", "layer_mix", "bag_size", "fine_tune_epochs")}
    return f"{type(estimator).__name__}({', '.join(f'{k}={v}' for k, v in changed.items())})"


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus()


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_estimator_contract(estimator, check, corpus, tmp_path):
    _run(check, estimator, corpus, tmp_path)


def _run(check, estimator, corpus, tmp_path):
    X, y = corpus
    if "tmp_path" in inspect.signature(check).parameters:
        check(estimator, X, y, tmp_path=tmp_path)
    else:
        check(estimator, X, y)


LANGUAGE_MODELS = [
    BiLM(**TINY_BILM),
    BiLM(**{**TINY_BILM, "token_layer": "char", "softmax": "sampled", "char_filters": ((1, 8), (2, 8))}),
]


@pytest.mark.parametrize("estimator", LANGUAGE_MODELS,
                         ids=lambda lm: f"BiLM(token_layer={lm.token_layer}, softmax={lm.softmax})")
@pytest.mark.parametrize("check", LANGUAGE_MODEL_CHECKS, ids=lambda c: c.__name__)
def test_language_model_contract(estimator, check, corpus, tmp_path):
    _run(check, estimator, corpus, tmp_path)
