"""A toy task, a toy method and a toy biLM for the suite, each declared in one place (the
way a user adds them): registered by tests/test_suite_registry.py."""

import numpy as np
from sklearn.utils import Bunch

from elmofeat.suite.bilms import BiLMSource
from elmofeat.suite.methods import MethodSpec
from elmofeat.suite.tasks import CrossValidation, TaskSpec

from .estimator_checks import make_topic_corpus


def _load_topics(data_home):
    texts, y = make_topic_corpus(240, seed=3)
    return Bunch(data=texts, target=np.asarray(y), target_names=[f"topic {k}" for k in range(4)])


def _counts(context):
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(binary=True)


TASK = TaskSpec("toy-topics", "Toy topics", _load_topics,
                CrossValidation(3, "240 synthetic topic documents", quick_documents=160),
                "synthetic topics, 4 classes, ~10 words", kind="topic")
METHOD = MethodSpec("toy-counts", "Binary counts + LR", "anchor", _counts, cost_per_token=1e-6,
                    groups=("toys",), default=False)


def _tiny_bilm(settings, glove, seed, documents):
    from elmofeat import BiLM

    return BiLM(embedding_dim=16, hidden_dim=16, max_epochs=2, random_state=seed).fit(documents)


def _tiny_elmo(context):
    from elmofeat import ElmoVectorizer

    return ElmoVectorizer(context.bilms["toy-tiny"], cache_dir=None, random_state=context.seed)


BILM = BiLMSource("toy-tiny", _tiny_bilm, lambda settings, n_tokens: 1.0,
                  "tiny biLM pretraining", curve_label="tiny", linestyle=":")
BILM_METHOD = MethodSpec("toy-tiny-elmo", "Tiny ELMo, frozen mix", "elmo", _tiny_elmo,
                         bilm="toy-tiny", mix="frozen", default=False)
