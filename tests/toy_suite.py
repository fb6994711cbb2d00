"""A toy task and a toy method for the suite, each declared in one place (the way a user
adds them): registered by tests/test_suite_registry.py."""

import numpy as np
from sklearn.utils import Bunch

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
