"""The feature extractors compared, each followed by the same LogisticRegression.

Every method is a factory ``(context) -> vectorizer``; :func:`make_model` puts the
vectorizer in front of the shared classifier. The ELMo methods share one biLM
pretrained on the split's training documents (``context.bilm``), passed fitted, so the
three mixes never pretrain again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from .._word_vectors import WordVectorVectorizer
from ..elmo import ElmoVectorizer
from ..skipgram import SkipGramVectorizer
from ..svd import SVDVectorizer


class PretrainedVectorsVectorizer(WordVectorVectorizer):
    """Pooled pretrained word vectors (the GloVe anchor): ``fit`` only keeps them.

    Parameters
    ----------
    keyed_vectors : gensim KeyedVectors
    pooling : {"mean", "max", "meanmax"}, default="mean"
    """

    _feature_prefix = "pretrained"

    def __init__(self, keyed_vectors=None, pooling="mean", lowercase=True,
                 token_pattern=r"(?u)\b\w\w+\b", tokenizer=None):
        self.keyed_vectors = keyed_vectors
        self.pooling = pooling
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer

    def _fit_keyed_vectors(self, token_lists):
        if self.keyed_vectors is None:
            raise ValueError("keyed_vectors is None: pass pretrained word vectors")
        return self.keyed_vectors


@dataclass
class Context:
    """What the factories of one split may use."""

    seed: int
    settings: Any  # ComparisonSettings
    bilm: Any = None  # fitted BiLM, for the ELMo methods
    glove: Any = None  # KeyedVectors, for the GloVe anchor


@dataclass(frozen=True)
class Method:
    label: str
    family: str  # "svd", "skipgram", "elmo", "anchor": how the report groups rows
    make: Callable[[Context], Any]
    needs_bilm: bool = False
    needs_glove: bool = False


def _elmo(mix):
    def make(context):
        return ElmoVectorizer(
            context.bilm, layer_mix=mix, cv=context.settings.mix_cv,
            mix_epochs=context.settings.mix_epochs, cache_dir=None, random_state=context.seed,
        )
    return make


METHODS = {
    "svd": Method("SVD (PPMI, 300d)", "svd",
                  lambda c: SVDVectorizer(random_state=c.seed)),
    "skipgram": Method(
        "skip-gram (SGNS, 300d)", "skipgram",
        lambda c: SkipGramVectorizer(epochs=c.settings.skipgram_epochs, min_count=2,
                                     random_state=c.seed)),
    "elmo-trainable": Method("ELMo, trainable mix", "elmo", _elmo("trainable"), needs_bilm=True),
    "elmo-frozen": Method("ELMo, frozen mix", "elmo", _elmo("frozen"), needs_bilm=True),
    "elmo-mlp": Method("ELMo, MLP mix", "elmo", _elmo("mlp"), needs_bilm=True),
    "tfidf": Method("TF-IDF (anchor)", "anchor", lambda c: TfidfVectorizer(sublinear_tf=True)),
    "glove": Method("GloVe 6B 50d mean (anchor)", "anchor",
                    lambda c: PretrainedVectorsVectorizer(c.glove), needs_glove=True),
}
# "elmo" on the command line selects the three mixes.
ALIASES = {"elmo": ("elmo-trainable", "elmo-frozen", "elmo-mlp")}


def resolve_methods(names) -> tuple[str, ...]:
    """Method keys from names and aliases, in the canonical order, without repeats."""
    wanted = set()
    for name in names:
        if name in ALIASES:
            wanted.update(ALIASES[name])
        elif name in METHODS:
            wanted.add(name)
        else:
            known = ", ".join([*METHODS, *ALIASES])
            raise ValueError(f"unknown method {name!r}; choose from {known}")
    return tuple(key for key in METHODS if key in wanted)


def make_model(method: Method, context: Context):
    """``vectorizer -> LogisticRegression``, the same classifier for every method."""
    return make_pipeline(method.make(context), LogisticRegression(max_iter=3000))
