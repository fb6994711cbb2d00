"""Lexical and contextual features side by side: TF-IDF + ELMo in one FeatureUnion."""

from __future__ import annotations

from numbers import Real

from sklearn.base import is_classifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn import pipeline
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from .text import validate_documents
from .elmo.vectorizer import ElmoVectorizer


class FeatureUnion(pipeline.FeatureUnion):
    """scikit-learn's ``FeatureUnion`` for documents: it checks them once, with
    :class:`ElmoVectorizer`'s errors (a ``None`` or ``bytes`` document is named before any
    part sees it), and reads a one-shot iterable (a generator) once, so that every part
    sees all of them rather than the first part emptying it. Same name, parameters and
    step names as scikit-learn's.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> union = FeatureUnion([("a", CountVectorizer()), ("b", CountVectorizer(binary=True))])
    >>> union.fit_transform(text for text in ["the cat", "the dog"]).shape
    (2, 6)
    """

    def fit(self, X, y=None, **params):
        return super().fit(validate_documents(X), y, **params)

    def fit_transform(self, X, y=None, **params):
        return super().fit_transform(validate_documents(X), y, **params)

    def transform(self, X, **params):
        return super().transform(validate_documents(X), **params)

#: The weight of the ELMo block: a compromise between the development tasks, whose best
#: weights differ (the layer probe's hybrid study, docs/benchmarks.md#layer-probe).
DEFAULT_ELMO_WEIGHT = 0.2


def make_hybrid(elmo=None, *, tfidf=None, elmo_weight=DEFAULT_ELMO_WEIGHT) -> FeatureUnion:
    """TF-IDF and ELMo features side by side, scaled so that one linear model uses both.

    TF-IDF rows have unit L2 norm and are sparse; ELMo features are dense, share a
    large common component and have another scale. The ELMo block is therefore
    centred (on the training documents) and each row scaled to unit norm, like the
    TF-IDF rows, then weighted by ``elmo_weight``: with one regularisation strength
    ``C`` for both blocks, that weight sets how cheaply the classifier may lean on the
    dense features. Follow it with ``LogisticRegression(C=10)`` (see Notes).

    Parameters
    ----------
    elmo : transformer, default=None
        The dense features: an :class:`ElmoVectorizer` (``None``:
        ``ElmoVectorizer(layer_mix="frozen")``, which needs no labels) or any other
        transformer of documents with dense output (``SVDVectorizer``, averaged word
        vectors, a fine-tuned ``ElmoVectorizer``, a Pipeline...). A classifier has no
        features to give: it is refused (:class:`StackingVectorizer` reads classifiers'
        scores).
    tfidf : transformer, default=None
        The lexical features; ``None``: ``TfidfVectorizer(sublinear_tf=True)``.
    elmo_weight : float, default=0.2
        Norm of each document's ELMo block relative to its TF-IDF block (1).

    Returns
    -------
    union : sklearn.pipeline.FeatureUnion
        Steps ``"tfidf"`` and ``"elmo"`` (a Pipeline: ``"elmo"``, ``"center"``,
        ``"normalize"``); parameters are searchable as usual, e.g.
        ``"features__elmo__elmo__layer_mix"`` inside a pipeline step named ``features``.

    Notes
    -----
    On the suite's first splits ``C=10`` beat ``C=1`` for TF-IDF alone on AG News, R8
    and MPQA but not on CR (``benchmarks/general_model.py penalty``); the suite now
    chooses ``C`` by cross-validation for every row, which is the safe choice for a new
    task. The best weight depends on the task too: the layer
    probe (``python benchmarks/layer_probe.py --studies hybrid``, first split of each
    task; its table is in ``docs/benchmarks.md``, section "Layer probe") scores weights
    from 0.05 to 1 against TF-IDF alone. 0.2 is the compromise; where it matters,
    search the weight with the pipeline's ``C`` and a biLM pretrained once (see
    Examples). The suite's ``hybrid-search`` rows (run when named: ``elmofeat benchmark
    --methods hybrid-search general-hybrid-search``) search it on every split (0, 0.05,
    0.1, 0.2 and 0.35) and its report gives their paired difference from TF-IDF, with
    the spread over splits. It keeps the frozen mix, with which its weight was chosen.

    With labels, prefer :class:`StackingVectorizer`: each block's own model and C, their
    scores blended by weights learned from the labels. On the suite's splits it is above
    this union on every task (``benchmarks/results/stacking.md``); without labels it
    falls back to this union, which stays the label-free construction (features for
    clustering, retrieval, or a classifier fitted elsewhere).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from elmofeat import BiLM, ElmoVectorizer, make_hybrid
    >>> texts = ["good match , great goal", "stocks fell , markets down"] * 10
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> hybrid = make_hybrid(ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None))
    >>> model = make_pipeline(hybrid, LogisticRegression(C=10)).fit(texts, [1, 0] * 10)
    >>> hybrid.transform(["great match"]).shape  # 8 TF-IDF words + 16 ELMo + 12 codes
    (1, 36)

    The weight of the ELMo block, searched (the fitted biLM is never pretrained again):

    >>> from sklearn.model_selection import GridSearchCV
    >>> grid = {"featureunion__transformer_weights": [{"elmo": w} for w in (0.0, 0.2)]}
    >>> search = GridSearchCV(make_pipeline(hybrid, LogisticRegression(C=10)), grid, cv=2)
    >>> search.fit(texts, [1, 0] * 10).best_params_["featureunion__transformer_weights"]
    {'elmo': 0.0}

    Any dense block takes the biLM's place (its step keeps the name ``"elmo"``):

    >>> from elmofeat import SVDVectorizer
    >>> make_hybrid(SVDVectorizer(n_components=4, random_state=0)).fit_transform(texts).shape
    (20, 12)
    """
    if not isinstance(elmo_weight, Real) or isinstance(elmo_weight, bool) or not elmo_weight >= 0:
        raise ValueError(f"elmo_weight must be a number >= 0, got {elmo_weight!r}")
    if elmo is None:
        elmo = ElmoVectorizer(layer_mix="frozen")
    elif not (hasattr(elmo, "fit") and hasattr(elmo, "transform")) or is_classifier(elmo):
        raise TypeError("elmo must be a transformer with dense output (fit and transform; "
                        f"an ElmoVectorizer, SVDVectorizer...), got {type(elmo).__name__}")
    dense = Pipeline([("elmo", elmo), ("center", StandardScaler(with_std=False)),
                      ("normalize", Normalizer())])
    lexical = TfidfVectorizer(sublinear_tf=True) if tfidf is None else tfidf
    return FeatureUnion([("tfidf", lexical), ("elmo", dense)],
                        transformer_weights={"elmo": float(elmo_weight)})
