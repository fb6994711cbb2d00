"""The feature extractors compared, each followed by a LogisticRegression.

Every method is a factory ``(context) -> vectorizer``; :func:`make_model` puts the
vectorizer in front of the classifier. Every estimator runs with its library defaults.
The ELMo methods of a split share one biLM pretrained on the split's training
documents (``context.bilm``, or ``context.glove_bilm`` whose word embedding starts
from GloVe), passed fitted, so the three mixes never pretrain again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline

from ..elmo.vectorizer import ElmoVectorizer
from ..hybrid import make_hybrid
from ..wordvectors.skipgram import SkipGramVectorizer
from ..wordvectors.svd import SVDVectorizer
from ..wordvectors.pretrained import WordVectorsVectorizer
from .catalog import ALIASES, METHOD_NAMES


@dataclass
class Context:
    """What the factories of one split may use."""

    seed: int
    settings: Any  # BenchmarkSettings
    bilm: Any = None  # fitted BiLM with the library's defaults
    glove_bilm: Any = None  # fitted BiLM whose word embedding starts from GloVe
    general_bilm: Any = None  # the shipped general model, never trained here
    adapted_bilm: Any = None  # the general model adapted to the split's training texts
    glove: Any = None  # KeyedVectors, for the GloVe anchor

    def bilm_for(self, which: str):
        return {"default": self.bilm, "glove": self.glove_bilm, "general": self.general_bilm,
                "adapted": self.adapted_bilm}[which]


@dataclass(frozen=True)
class Method:
    label: str
    family: str  # "anchor", "svd", "skipgram", "elmo", "elmo-glove", "hybrid", "ablation"
    make: Callable[[Context], Any]
    bilm: str | None = None  # which pretrained biLM of the split it uses
    needs_glove: bool = False
    C: float = 1.0  # of the LogisticRegression that follows
    # Parameters of ``features -> LogisticRegression`` chosen by GridSearchCV
    # (stratified 3-fold, on the training documents only); None: no search.
    grid: dict | None = None


def _elmo(mix, which="default", **params):
    def make(context):
        return ElmoVectorizer(context.bilm_for(which), layer_mix=mix, cache_dir=None,
                              random_state=context.seed, **context.settings.mix_params(),
                              **params)
    return make


def _hybrid_of(which):
    def make(context):
        return make_hybrid(ElmoVectorizer(context.bilm_for(which), layer_mix="frozen",
                                          cache_dir=None, random_state=context.seed))
    return make


_hybrid = _hybrid_of("default")


# The ELMo block's weight in make_hybrid, 0 (TF-IDF alone) among the candidates: the
# best weight depends on the task (benchmarks/layer_probe.py --hybrid).
HYBRID_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.35)

METHODS = {
    "tfidf": Method("TF-IDF + LR", "anchor", lambda c: TfidfVectorizer(sublinear_tf=True)),
    "tfidf-c10": Method("TF-IDF + LR (C=10)", "anchor",
                        lambda c: TfidfVectorizer(sublinear_tf=True), C=10.0),
    "glove": Method("GloVe 6B 50d mean", "anchor",
                    lambda c: WordVectorsVectorizer(c.glove), needs_glove=True),
    "svd": Method("SVDVectorizer", "svd", lambda c: SVDVectorizer(random_state=c.seed)),
    "skipgram": Method("SkipGramVectorizer", "skipgram",
                       lambda c: SkipGramVectorizer(random_state=c.seed)),
    "elmo-trainable": Method("ELMo, trainable mix", "elmo", _elmo("trainable"), bilm="default"),
    "elmo-frozen": Method("ELMo, frozen mix", "elmo", _elmo("frozen"), bilm="default"),
    "elmo-mlp": Method("ELMo, MLP mix", "elmo", _elmo("mlp"), bilm="default"),
    # The default's evidence: mixes without dividing each layer by its spread.
    "elmo-frozen-unscaled": Method("ELMo, frozen mix, layers unscaled", "ablation",
                                   _elmo("frozen", scale_layers=False), bilm="default"),
    "elmo-trainable-unscaled": Method("ELMo, trainable mix, layers unscaled", "ablation",
                                      _elmo("trainable", scale_layers=False), bilm="default"),
    "elmo-glove-trainable": Method("ELMo + GloVe, trainable mix", "elmo-glove",
                                   _elmo("trainable", "glove"), bilm="glove", needs_glove=True),
    "elmo-glove-frozen": Method("ELMo + GloVe, frozen mix", "elmo-glove",
                                _elmo("frozen", "glove"), bilm="glove", needs_glove=True),
    "elmo-glove-mlp": Method("ELMo + GloVe, MLP mix", "elmo-glove", _elmo("mlp", "glove"),
                             bilm="glove", needs_glove=True),
    "elmo-glove-frozen-unscaled": Method("ELMo + GloVe, frozen mix, layers unscaled", "ablation",
                                         _elmo("frozen", "glove", scale_layers=False),
                                         bilm="glove", needs_glove=True),
    "hybrid": Method("TF-IDF + ELMo (make_hybrid)", "hybrid", _hybrid, bilm="default", C=10.0),
    "hybrid-search": Method(
        "TF-IDF + ELMo (make_hybrid, weight searched)", "hybrid", _hybrid, bilm="default",
        C=10.0, grid={"featureunion__transformer_weights": [{"elmo": w} for w in HYBRID_WEIGHTS]}),
    # The general English biLM shipped with elmofeat (en-small): never trained per split.
    "general-trainable": Method("ELMo en-small, trainable mix", "general",
                                _elmo("trainable", "general"), bilm="general"),
    "general-frozen": Method("ELMo en-small, frozen mix", "general", _elmo("frozen", "general"),
                             bilm="general"),
    "general-mlp": Method("ELMo en-small, MLP mix", "general", _elmo("mlp", "general"),
                          bilm="general"),
    "general-adapted": Method("ELMo en-small adapted (1 epoch), frozen mix", "general",
                              _elmo("frozen", "adapted"), bilm="adapted"),
    "general-hybrid": Method("TF-IDF + ELMo en-small (make_hybrid)", "hybrid",
                             _hybrid_of("general"), bilm="general", C=10.0),
    "general-hybrid-search": Method(
        "TF-IDF + ELMo en-small (make_hybrid, weight searched)", "hybrid",
        _hybrid_of("general"), bilm="general", C=10.0,
        grid={"featureunion__transformer_weights": [{"elmo": w} for w in HYBRID_WEIGHTS]}),
}
if tuple(METHODS) != METHOD_NAMES:  # pragma: no cover - a developer's mistake
    raise RuntimeError("benchmark.catalog.METHOD_NAMES must list METHODS in order")


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
    """``features -> LogisticRegression``: the same classifier for every method (C=1
    unless the method says otherwise, as the strong TF-IDF anchor does), inside a
    ``GridSearchCV`` when the method searches parameters. The search's clones share the
    split's fitted biLM: it is never pretrained again."""
    model = make_pipeline(method.make(context), LogisticRegression(max_iter=3000, C=method.C))
    if method.grid is None:
        return model
    folds = StratifiedKFold(3, shuffle=True, random_state=context.seed)
    return GridSearchCV(model, method.grid, cv=folds)
