"""Fine-tuning inside ``ElmoVectorizer`` (``fine_tune_epochs``) and ``ElmoClassifier``.

Both ask :data:`FINE_TUNED` for a copy of their (pretrained, possibly adapted) biLM
fine-tuned on their labelled texts (:func:`elmofeat.bilm.finetune.fine_tune`). The
cache is this process's: the candidates of a search that share the texts, the labels
and the fine-tuning settings (a search over ``layer_mix``, ``bag_size``, the
classifier's ``C``) fine-tune once. The fine-tuned copies of a model share one
read-only word table (the model's own where it is read-only already, as a shared
pretrained model's is), so each costs its LSTM and token layers alone.

``ElmoVectorizer.fit_transform`` cross-fits, as scikit-learn's ``TargetEncoder``
does: each labelled document's features come from a biLM fine-tuned on the other
folds (:class:`CrossFittedFineTuning`), so that a classifier downstream never learns
from features of documents whose labels shaped them.
"""

from __future__ import annotations

import hashlib
import json

import joblib
import numpy as np

from .._version import __version__ as _VERSION
from .caches import documents_digest, model_identity
from .made_once import MadeOnce

#: Where the estimators' recipe departs from ``fine_tune``'s own defaults: every row
#: trains and the last epoch is kept (on CR, held-out early stopping kept the probe on
#: most folds: ``benchmarks/fine_tuning.py``).
RECIPE = {"early_stopping": False}


def recipe(epochs: int, random_state: int, **changes) -> dict:
    """Every setting of :func:`~elmofeat.bilm.finetune.fine_tune` but ``verbose``:
    its defaults, :data:`RECIPE`, then ``epochs``, ``random_state`` and ``changes``.
    All of them key the cache, so ``ElmoVectorizer`` and ``ElmoClassifier`` with the
    same settings share one fine-tuned model."""
    import inspect

    from ..bilm.finetune import fine_tune

    defaults = {name: parameter.default
                for name, parameter in inspect.signature(fine_tune).parameters.items()
                if parameter.kind is parameter.KEYWORD_ONLY and name != "verbose"}
    return {**defaults, **RECIPE, "epochs": int(epochs), "random_state": int(random_state),
            **changes}


class FineTunedCache:
    """Fine-tuned models (:class:`~elmofeat.bilm.finetune.FineTuned`) by what defines
    them: the base model's full fitted state, the texts, the labels and every setting
    of :func:`~elmofeat.bilm.finetune.fine_tune`. In memory, least recently used first
    out; never on disk."""

    def __init__(self, max_models: int = 32):
        self._memory = MadeOnce(max_models)

    @staticmethod
    def key(base, texts, labels, settings: dict) -> str | None:
        """None where the base cannot be keyed (a custom tokenizer)."""
        if base.tokenizer is not None:
            return None
        text = ("fine-tuned" + _VERSION + model_identity(base)
                + json.dumps({k: repr(v) for k, v in sorted(settings.items())})
                + documents_digest(texts) + joblib.hash(np.asarray(labels)))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def get(self, base, texts, labels, settings: dict, verbose: bool = False):
        """``fine_tune(base, texts, labels, **settings)``, made once per key
        (``verbose`` says how it runs, not what it makes: not in the key)."""
        from ..bilm import sharing
        from ..bilm.finetune import fine_tune

        key = self.key(base, texts, labels, settings)
        if key is None:
            return fine_tune(base, texts, labels, **settings, verbose=verbose)

        def made():
            tuned = fine_tune(base, texts, labels, **settings, verbose=verbose)
            if tuned.bilm is not base:  # read-only to every estimator that gets it
                sharing.share(tuned.bilm, source=sharing.CACHED)
            return tuned
        return self._memory.get(key, made)

    def clear(self):
        self._memory.clear()


FINE_TUNED = FineTunedCache()


class CrossFittedFineTuning:
    """What ``ElmoVectorizer`` needs to fine-tune: the base model (before fine-tuning),
    the settings and the labels, and the cross-fitted features of the training rows."""

    def __init__(self, vectorizer, base, documents, targets, settings: dict):
        self.vectorizer, self.base, self.documents = vectorizer, base, documents
        self.targets, self.settings = targets, settings

    def tuned(self, rows):
        """The base fine-tuned on the labelled documents ``rows`` (positions in
        ``documents``)."""
        texts = [self.documents[i] for i in rows]
        return FINE_TUNED.get(self.base, texts, self.targets.y[rows], self.settings,
                              verbose=bool(self.vectorizer.verbose))

    def cross_fitted_features(self, mix_settings, threads) -> np.ndarray:
        """Every document's features before ``_finish``: a labelled one's from the
        biLM fine-tuned on the other folds, an unlabelled one's from the full fit (it
        lent that model no label)."""
        from ..mixes.crossfit import cross_fitting_folds

        from . import progress

        vec, targets = self.vectorizer, self.targets
        out = np.zeros((len(self.documents), len(vec.get_feature_names_out())), np.float32)
        folds = cross_fitting_folds(vec.cv, targets, mix_settings.seed)
        for train, test in progress.folds(vec.verbose, folds, "ElmoVectorizer.fit_transform: "
                                          "cross-fitting the fine-tuning"):
            out[targets.labelled[test]] = self.fold_features(train, test, mix_settings,
                                                             threads)
        unlabelled = targets.unlabelled
        if len(unlabelled):
            out[unlabelled] = vec._transform([self.documents[i] for i in unlabelled],
                                             threads, finish=False)
        return out

    def fold_features(self, train, test, mix_settings, threads) -> np.ndarray:
        """Features of the labelled documents ``labelled[test]`` from the biLM
        fine-tuned on ``labelled[train]``, through the vectorizer's fitted scales and
        bag, and its mix (a supervised mix learned again on that fold, under that
        fold's biLM). The fold's biLM starts from the same model and moves little, so
        the bag's codes and the mix's columns stay aligned with those ``transform``
        gives (as the MLP mix's shared initialisation keeps its folds aligned)."""
        from ..mixes import get_mix
        from ..mixes.base import MixData, pool_layers
        from . import caches
        from .transform import document_features

        vec, labelled = self.vectorizer, self.targets.labelled
        bilm = self.tuned(labelled[train]).bilm
        spec = get_mix(vec.layer_mix)
        if not spec.needs_labels:
            documents = [self.documents[i] for i in labelled[test]]
            return document_features(bilm, vec._output_mix(), vec.pooling, documents,
                                     vec._cached_layers(bilm, threads), vec.batch_size,
                                     threads)
        data = MixData(vec.layer_scales_, bilm.output_dim_, targets=self.targets)
        data.layers, data.offsets = caches.REPRESENTATIONS.embed(
            bilm, self.documents, store=False, batch_size=vec.batch_size, threads=threads)
        if spec.commutes_with_mean_pooling and vec.pooling == "mean":
            data.pooled_layers = pool_layers(data.layers, data.offsets)
        mix = spec.fit_mix(data, labelled[train], mix_settings)
        return vec._output_mix(mix).features(data, labelled[test], vec.pooling)
