"""ElmoVectorizer with a pretrained biLM named or loaded, and its adaptation to X."""

import copy

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from elmofeat import BiLM, ElmoVectorizer
from elmofeat import _bilm_cache
from elmofeat.bilm import hub

from .estimator_checks import make_topic_corpus

SMALL_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus(120)


@pytest.fixture(scope="module")
def general(corpus, tmp_path_factory):
    """A small 'general' model saved as a pretrained folder."""
    folder = tmp_path_factory.mktemp("general") / "tiny-general"
    bilm = BiLM(**SMALL_BILM).fit(corpus[0][:60])
    bilm.save_pretrained(folder, dtype="float32")
    return folder


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    _bilm_cache.BILMS.clear()
    _bilm_cache.REPRESENTATIONS.clear()
    monkeypatch.setattr(_bilm_cache, "_PRETRAINED", __import__("collections").OrderedDict())
    yield


def test_a_named_or_path_biLM_is_loaded_once_and_never_trained(corpus, general, monkeypatch):
    X, y = corpus
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", hub.file_sha256(general / "bilm.pt"), folder=str(general)))
    loads = []
    original = BiLM.load.__func__
    monkeypatch.setattr(BiLM, "load", classmethod(
        lambda cls, *a, **k: loads.append(a) or original(cls, *a, **k)))
    fits = []
    monkeypatch.setattr(BiLM, "_fit", lambda self, X: fits.append(1))
    by_name = ElmoVectorizer("tiny-general", cache_dir=None, random_state=0).fit(X)
    by_path = ElmoVectorizer(general, cache_dir=None, random_state=0).fit(X)
    assert by_name.bilm_ is by_path.bilm_  # one shared copy
    assert len(loads) == 1 and not fits
    np.testing.assert_array_equal(by_name.transform(X[:5]), by_path.transform(X[:5]))
    # A search over the mix clones the vectorizer: still one load, no pretraining.
    search = GridSearchCV(Pipeline([("elmo", ElmoVectorizer("tiny-general", cache_dir=None,
                                                            random_state=0)),
                                    ("clf", LogisticRegression(max_iter=500))]),
                          {"elmo__layer_mix": ["frozen", "trainable"]}, cv=2).fit(X, y)
    assert len(loads) == 1 and not fits
    assert search.best_estimator_.named_steps["elmo"].bilm_ is by_name.bilm_
    assert clone(by_name).bilm == "tiny-general"


def test_adaptation_trains_a_copy_once_and_changes_the_features(corpus, general):
    X, y = corpus
    base = BiLM.from_pretrained(general)
    before = copy.deepcopy(base.language_model_.state_dict())
    plain = ElmoVectorizer(base, cache_dir=None, random_state=0).fit(X)
    adapted = ElmoVectorizer(base, adapt_epochs=2, cache_dir=None, random_state=0).fit(X)
    assert adapted.bilm_ is not base
    for name, tensor in base.language_model_.state_dict().items():
        assert torch.equal(tensor, before[name]), name  # the pretrained model is untouched
    assert [h.get("warm_start", False) for h in adapted.bilm_.history_][-2:] == [True, True]
    assert adapted.bilm_.perplexity(X) < base.perplexity(X)
    assert not np.allclose(adapted.transform(X[:5]), plain.transform(X[:5]))
    # Clones of a search share one adapted copy (the cache), and the same seed gives
    # the same adapted model.
    again = ElmoVectorizer(base, adapt_epochs=2, cache_dir=None, random_state=0).fit(X)
    assert again.bilm_ is adapted.bilm_
    _bilm_cache.BILMS.clear()
    fresh = ElmoVectorizer(base, adapt_epochs=2, cache_dir=None, random_state=0).fit(X)
    np.testing.assert_array_equal(fresh.transform(X[:5]), adapted.transform(X[:5]))


def test_adaptation_is_cached_on_disk_across_processes(corpus, general, tmp_path):
    X, _ = corpus
    ElmoVectorizer(general, adapt_epochs=1, cache_dir=tmp_path, random_state=0).fit(X)
    assert len(list(tmp_path.glob("bilm-*.pt"))) == 1
    _bilm_cache.BILMS.clear()
    reloaded = ElmoVectorizer(general, adapt_epochs=1, cache_dir=tmp_path, random_state=0).fit(X)
    assert reloaded.bilm_.history_[-1]["warm_start"] is True
    assert (tmp_path / "pretrain.log").read_text().count("\n") == 1


def test_adapt_epochs_needs_a_pretrained_biLM(corpus):
    X, _ = corpus
    with pytest.raises(ValueError, match="adapt_epochs continues the pretraining"):
        ElmoVectorizer(BiLM(**SMALL_BILM), adapt_epochs=1, cache_dir=None).fit(X)
    with pytest.raises(ValueError, match="neither a registered pretrained model"):
        ElmoVectorizer("no-such-model", cache_dir=None).fit(X)
